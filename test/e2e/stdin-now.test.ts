// What a client wrote to stdin before claw started reading is read at once when the stdio transport starts
// (src/node/stdin-now.ts, docs/startup.md): nothing may be lost, doubled or reordered, whatever stdin is — a pipe
// written all at once (more than the 64 KB read at start), a pipe written in two parts, or a regular file.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { CLAW, ROOT } from './helpers/claw-process.ts';

const INIT = readFileSync(join(ROOT, 'examples/minimal/session.ndjson'), 'utf8').split('\n')[0];
const status = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'claw.status', params: {} });
const ids = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l).id);

test('a pipe written all at once, more than the first read takes: every reply, in order', () => {
  const n = 2500; // ~150 KB of requests behind the initialize line
  const input = [INIT, ...Array.from({ length: n }, (_, i) => status(i + 2))].join('\n') + '\n';
  assert.ok(input.length > 128 * 1024);
  const r = spawnSync(process.execPath, [CLAW, 'run', 'examples/minimal/claw.yaml'], { cwd: ROOT, input, encoding: 'utf8', timeout: 30_000, maxBuffer: 64 * 1024 * 1024 });
  assert.is(r.status, 0, r.stderr);
  assert.equal(ids(r.stdout), Array.from({ length: n + 1 }, (_, i) => i + 1));
});

test('stdin a regular file: every reply, in order (the file stream continues after the bytes read at start)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-stdin-'));
  try {
    const file = join(dir, 'in.ndjson');
    writeFileSync(file, [INIT, status(2), status(3)].join('\n') + '\n');
    const fd = openSync(file, 'r');
    try {
      const r = spawnSync(process.execPath, [CLAW, 'run', 'examples/minimal/claw.yaml'], { cwd: ROOT, stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8', timeout: 20_000 });
      assert.is(r.status, 0, r.stderr);
      assert.equal(ids(r.stdout), [1, 2, 3]);
    } finally {
      closeSync(fd);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a pipe written in two parts (the second after the first reply): every reply, in order', async () => {
  const child = spawn(process.execPath, [CLAW, 'run', 'examples/minimal/claw.yaml'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  const firstReply = new Promise<void>((resolve) =>
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve();
    }),
  );
  child.stdin.write(INIT + '\n' + status(2).slice(0, 20)); // the second frame cut in half
  await firstReply;
  child.stdin.end(status(2).slice(20) + '\n' + status(3) + '\n');
  const code = await new Promise((r) => child.once('exit', r));
  assert.is(code, 0);
  assert.equal(ids(out), [1, 2, 3]);
});

test.run();
