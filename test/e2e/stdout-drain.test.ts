// A reader slower than claw loses nothing: replies still queued in process.stdout when stdin ends are written
// before the process exits (src/node/when-flushed.ts). Before, an exit timer armed as `run` returned cut them off
// one second later, with exit code 0.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { CLAW, ROOT } from './helpers/claw-process.ts';

const INIT = readFileSync(join(ROOT, 'examples/minimal/session.ndjson'), 'utf8').split('\n')[0];
const status = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'claw.status', params: {} });

/** Counts the complete reply lines claw writes; `rest` is what follows the last newline so far. */
function countLines(stdout: Readable) {
  const c = { lines: 0, rest: '' };
  stdout.on('data', (d: Buffer) => {
    const parts = (c.rest + d.toString('utf8')).split('\n');
    c.rest = parts.pop()!;
    c.lines += parts.length;
  });
  return c;
}

/** Writes `n` claw.status requests (ids from 2), 1,000 a chunk, as fast as the pipe takes them. */
function sendRequests(stdin: Writable, n: number) {
  let sent = 0;
  const chunk = (from: number) => Array.from({ length: 1000 }, (_, i) => status(from + i)).join('\n') + '\n';
  const done = new Promise<void>((resolve) => {
    const pump = () => {
      while (sent < n) {
        const ok = stdin.write(chunk(sent + 2));
        sent += 1000;
        if (!ok) return void stdin.once('drain', pump);
      }
      resolve();
    };
    pump();
  });
  return { done, sent: () => sent };
}

test('20,000 replies (~1.4 MB) to a reader that starts reading 2.5 s after stdin ended: every one, exit 0', async () => {
  const n = 20_000;
  const child = spawn(process.execPath, [CLAW, 'run', 'examples/minimal/claw.yaml'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  child.stdout.pause();
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.stdin.end([INIT, ...Array.from({ length: n }, (_, i) => status(i + 2))].join('\n') + '\n');
  await new Promise((r) => setTimeout(r, 2500));
  const replies = countLines(child.stdout);
  const ended = new Promise((r) => child.stdout.once('end', r));
  child.stdout.resume();
  const code = await exited;
  await ended;
  assert.is(code, 0, err.slice(-2000));
  assert.is(replies.rest, '', 'no reply cut off mid-line');
  assert.is(replies.lines, n + 1);
});

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

test('a reader that stops reading while its requests keep coming: claw stops reading stdin (memory flat), then answers every one', async () => {
  const child = spawn(process.execPath, [CLAW, 'run', 'examples/minimal/claw.yaml'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.stdout.pause();
    child.stdin.on('error', () => {});
    child.stdin.write(INIT + '\n');
    await new Promise((r) => setTimeout(r, 500));
    const before = rssMb(child.pid!);
    // 300,000 requests (~21 MB), 1,000 a chunk, as fast as the pipe takes them; their replies (~21 MB) are not read.
    const n = 300_000;
    const sending = sendRequests(child.stdin, n);
    await Promise.race([sending.done, new Promise((r) => setTimeout(r, 3000))]); // from here on the client waits on the pipe: claw reads no more
    const grown = rssMb(child.pid!) - before;
    // Before, every request was read and its reply kept in process.stdout's buffer: +95 to +240 MB in 3 s here.
    // Held: the 4 MiB of waiting replies plus the heap's garbage between collections, which reached 40 MB with
    // the whole suite running on 2 cores; 64 MB keeps that apart from the unbounded growth.
    assert.ok(grown < 64, `claw grew by ${grown.toFixed(0)} MB while its reader read nothing; stderr: ${err.slice(-1000)}`);
    assert.ok(sending.sent() < n, 'the pipe to claw filled: claw stopped reading');
    // The reader comes back: everything sent is answered, then claw exits at the end of stdin.
    const replies = countLines(child.stdout);
    child.stdout.resume();
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await sending.done;
    child.stdin.end();
    assert.is(await exited, 0, err.slice(-2000));
    assert.is(replies.lines, n + 1);
  } finally {
    child.kill('SIGKILL');
  }
});

test.run();
