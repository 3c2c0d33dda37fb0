// A reader slower than claw loses nothing: replies still queued in process.stdout when stdin ends are written
// before the process exits (src/node/when-flushed.ts). Before, an exit timer armed as `run` returned cut them off
// one second later, with exit code 0.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { CLAW, ROOT } from './helpers/claw-process.ts';

const INIT = readFileSync(join(ROOT, 'examples/minimal/session.ndjson'), 'utf8').split('\n')[0];
const status = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'claw.status', params: {} });

test('20,000 replies (~1.4 MB) to a reader that starts reading 2.5 s after stdin ended: every one, exit 0', async () => {
  const n = 20_000;
  const child = spawn(process.execPath, [CLAW, 'run', 'examples/minimal/claw.yaml'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  child.stdout.pause();
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.stdin.end([INIT, ...Array.from({ length: n }, (_, i) => status(i + 2))].join('\n') + '\n');
  await new Promise((r) => setTimeout(r, 2500));
  let lines = 0;
  let last = '';
  child.stdout.on('data', (d: Buffer) => {
    const text = last + d.toString('utf8');
    const parts = text.split('\n');
    last = parts.pop()!;
    lines += parts.length;
  });
  const ended = new Promise((r) => child.stdout.once('end', r));
  child.stdout.resume();
  const code = await exited;
  await ended;
  assert.is(code, 0, err.slice(-2000));
  assert.is(last, '', 'no reply cut off mid-line');
  assert.is(lines, n + 1);
});

test.run();
