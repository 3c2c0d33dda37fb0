// claw run's stdio (src/transports/stdio.ts over process.stdin and process.stdout): nothing may be lost, doubled
// or reordered, whatever stdin and stdout are — a socket (Node's spawn) or a pipe (a shell), written all at once
// (more than one read takes) or in two parts, or a regular file — and nothing may block: a client that has not
// written yet, or one that reads no reply until it has written every request.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { closeSync, createWriteStream, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { Socket } from 'node:net';
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

function inTempDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'claw-stdin-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('stdin and stdout shell pipes (FIFOs, not sockets): every reply, in order', () => {
  inTempDir((dir) => {
    const file = join(dir, 'in.ndjson');
    writeFileSync(file, [INIT, status(2), status(3)].join('\n') + '\n');
    const r = spawnSync('sh', ['-c', 'cat "$1" | "$0" "$2" run examples/minimal/claw.yaml | cat', process.execPath, file, CLAW], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
    assert.is(r.status, 0, r.stderr);
    assert.equal(ids(r.stdout), [1, 2, 3]);
  });
});

test('stdout a regular file: the replies written straight to it and those through the stream, in order', () => {
  inTempDir((dir) => {
    const out = join(dir, 'out.ndjson');
    const fd = openSync(out, 'w');
    try {
      const r = spawnSync(process.execPath, [CLAW, 'run', 'examples/minimal/claw.yaml'], { cwd: ROOT, input: [INIT, status(2), status(3)].join('\n') + '\n', stdio: ['pipe', fd, 'pipe'], encoding: 'utf8', timeout: 20_000 });
      assert.is(r.status, 0, r.stderr);
    } finally {
      closeSync(fd);
    }
    assert.equal(ids(readFileSync(out, 'utf8')), [1, 2, 3]);
  });
});

test('nothing written yet when claw reads: the first request, sent later, is answered', async () => {
  const child = spawn(process.execPath, [CLAW, 'run', 'examples/minimal/claw.yaml'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  let out = '';
  await new Promise<void>((resolve) =>
    child.stderr.on('data', (d) => {
      err += d;
      if (err.includes('runtime started')) resolve();
    }),
  );
  await new Promise((r) => setTimeout(r, 100)); // well past the read at start
  child.stdout.on('data', (d) => (out += d));
  child.stdin.end(INIT + '\n' + status(2) + '\n');
  const code = await new Promise((r) => child.once('exit', r));
  assert.is(code, 0, err);
  assert.equal(ids(out), [1, 2]);
});

test('a client that never writes does not freeze claw: SIGTERM ends it cleanly', async () => {
  const child = spawn(process.execPath, [CLAW, 'run', 'examples/minimal/claw.yaml'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  await new Promise<void>((resolve) =>
    child.stderr.on('data', (d) => {
      err += d;
      if (err.includes('runtime started')) resolve();
    }),
  );
  await new Promise((r) => setTimeout(r, 100));
  const t0 = Date.now();
  child.kill('SIGTERM');
  const code = await new Promise((r) => child.once('exit', r));
  assert.is(code, 0, err);
  assert.ok(Date.now() - t0 < 5000);
  assert.match(err, /"runtime exiting","reason":"SIGTERM"/);
});

test('stderr holds log records only, also under --pending-deprecation', () => {
  const input = [INIT, status(2), status(3)].join('\n') + '\n';
  for (const env of [{}, { NODE_OPTIONS: '--pending-deprecation' }, { NODE_PENDING_DEPRECATION: '1' }]) {
    const r = spawnSync(process.execPath, [CLAW, 'run', 'examples/minimal/claw.yaml'], { cwd: ROOT, input, encoding: 'utf8', timeout: 20_000, env: { ...process.env, ...env } });
    assert.is(r.status, 0, r.stderr);
    assert.equal(ids(r.stdout), [1, 2, 3]);
    assert.not.match(r.stderr, /DeprecationWarning|DEP0111/, JSON.stringify(env));
    for (const line of r.stderr.trim().split('\n')) JSON.parse(line); // every stderr line is a log record
  }
});

test('a client that reads no reply before it has written every request (pipes, 64 KB each): no deadlock', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-stdin-'));
  const inFifo = join(dir, 'in');
  const outFifo = join(dir, 'out');
  execFileSync('mkfifo', [inFifo, outFifo]);
  // claw's replies to the first 64 KB it reads exceed a pipe's 64 KB: written blocking, they would wait for this
  // client, which waits for claw to read the rest of its requests. Held open read-write (Linux: no wait for a
  // writer), the reply pipe is not read at all until every request is written.
  const outFd = openSync(outFifo, 'r+');
  const n = 5000;
  const input = [INIT, ...Array.from({ length: n }, (_, i) => status(i + 2))].join('\n') + '\n';
  const child = spawn('sh', ['-c', 'exec "$0" "$1" run examples/minimal/claw.yaml < "$2" > "$3"', process.execPath, CLAW, inFifo, outFifo], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise((r) => child.once('exit', r));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000); // a deadlock: the write below then fails (EPIPE)
  let reader: Socket | undefined;
  try {
    const written = await new Promise<boolean>((resolve) => {
      const w = createWriteStream(inFifo);
      w.end(input, (e?: Error | null) => resolve(!e));
    });
    assert.ok(written, `claw stopped reading its requests: ${err.slice(-500)}`);
    let out = '';
    reader = new Socket({ fd: outFd, readable: true, writable: false });
    reader.setEncoding('utf8');
    // Every reply, or what there is once claw has exited (the pipe never ends: this test holds a write end).
    await new Promise<void>((resolve) => {
      reader!.on('data', (d) => {
        out += d;
        if (out.split('\n').length > n + 1) resolve();
      });
      void exited.then(() => setTimeout(resolve, 1000));
    });
    assert.equal(ids(out), Array.from({ length: n + 1 }, (_, i) => i + 1));
    assert.is(await exited, 0, err);
  } finally {
    clearTimeout(timer);
    child.kill('SIGKILL');
    if (reader) reader.destroy();
    else closeSync(outFd);
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
