// The one reader for configuration files (src/node/fs-reader.ts): regular files only, never blocking, never past
// the cap, and with `within` never outside a directory, symlinks included. Each refusal is tried for real.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { createFsReader, readBounded, readBoundedText } from '../../src/node/fs-reader.ts';
import { MAX_SOURCE_BYTES } from '../../src/manifest/source.ts';

const dir = mkdtempSync(join(tmpdir(), 'claw-fs-reader-'));
const root = join(dir, 'root');
mkdirSync(root);
writeFileSync(join(root, 'ok.yaml'), 'kind: Identity\n');
writeFileSync(join(dir, 'secret.txt'), 'outside the root\n');
symlinkSync(join(dir, 'secret.txt'), join(root, 'escape.yaml'));
symlinkSync('ok.yaml', join(root, 'inner-link.yaml'));
execFileSync('mkfifo', [join(root, 'fifo')]);

test.after(() => rmSync(dir, { recursive: true, force: true }));

/** The error `fn` throws, within a time bound: a blocking read would hold the test past it. */
function refusal(fn: () => unknown): { code?: string; message: string } {
  const t0 = Date.now();
  try {
    fn();
  } catch (e) {
    assert.ok(Date.now() - t0 < 2000, `refused in ${Date.now() - t0} ms`);
    return e as { code?: string; message: string };
  }
  throw new assert.Assertion({ message: 'expected a refusal', operator: 'throws', expects: 'error', actual: 'read', generated: false });
}

test('a regular file is read whole', () => {
  assert.is(readBoundedText(join(root, 'ok.yaml')), 'kind: Identity\n');
  assert.is(readBoundedText(join(root, 'ok.yaml'), { within: root }), 'kind: Identity\n');
  assert.is(readBoundedText(join(root, 'inner-link.yaml'), { within: root }), 'kind: Identity\n');
});

test('/dev/zero and /dev/urandom are refused without reading them', () => {
  for (const dev of ['/dev/zero', '/dev/urandom']) {
    const before = process.memoryUsage().rss;
    const e = refusal(() => readBounded(dev));
    assert.is(e.code, 'not-regular', dev);
    assert.ok(process.memoryUsage().rss - before < 32 * 1024 * 1024, 'no buffer was filled');
  }
});

test('a FIFO with no writer is refused at once, not waited on', () => {
  const e = refusal(() => readBounded(join(root, 'fifo')));
  assert.is(e.code, 'not-regular');
  assert.match(e.message, /fifo is not a regular file/);
});

test('a directory is refused as EISDIR', () => {
  assert.is(refusal(() => readBounded(root)).code, 'EISDIR');
});

test('a file over the cap is refused; at the cap it is read; truncate gives the first cap bytes', () => {
  const big = join(root, 'big.yaml');
  writeFileSync(big, 'x'.repeat(1001));
  const e = refusal(() => readBounded(big, { maxBytes: 1000 }));
  assert.is(e.code, 'too-large');
  assert.not.match(e.message, /xxx/, 'the message carries no content');
  assert.is(readBounded(big, { maxBytes: 1001 }).length, 1001);
  assert.is(readBounded(big, { maxBytes: 10, truncate: true }).length, 10);
});

test('a file that says size 0 but has content is still capped (/proc)', () => {
  assert.is(refusal(() => readBounded('/proc/self/status', { maxBytes: 16 })).code, 'too-large');
});

test('within: a symlink inside the directory that points outside it is refused', () => {
  const e = refusal(() => readBounded(join(root, 'escape.yaml'), { within: root }));
  assert.is(e.code, 'outside');
  assert.not.match(e.message, /outside the root\n/, 'the message carries no content');
  // Without `within` (a launch manifest, written by the operator) the same link is followed.
  assert.is(readBoundedText(join(root, 'escape.yaml')), 'outside the root\n');
});

test('within: a path outside the directory is refused, and a FIFO inside it too', () => {
  assert.is(refusal(() => readBounded(join(dir, 'secret.txt'), { within: root })).code, 'outside');
  assert.is(refusal(() => readBounded(join(root, '../secret.txt'), { within: root })).code, 'outside');
  assert.is(refusal(() => readBounded(join(root, 'fifo'), { within: root })).code, 'not-regular');
  assert.is(refusal(() => readBounded(join(root, 'missing.yaml'), { within: root })).code, 'ENOENT');
});

test('an HTTP registry answer is capped too: an endless body or a huge Content-Length is refused', async () => {
  let streamed = 0;
  const server = createServer((req, res) => {
    if (req.url === '/huge') {
      res.writeHead(200, { 'content-length': String(MAX_SOURCE_BYTES + 1) });
      res.end('x');
      return;
    }
    res.writeHead(200);
    const chunk = Buffer.alloc(64 * 1024);
    const more = () => {
      while (!res.destroyed && streamed < 64 * MAX_SOURCE_BYTES) {
        streamed += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
    };
    more();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  try {
    const reader = createFsReader();
    for (const path of ['/huge', '/endless']) {
      let err: Error | undefined;
      await reader.fetch!(`http://127.0.0.1:${port}${path}`).catch((e) => (err = e));
      assert.match(String(err?.message), /larger than/, path);
    }
    assert.ok(streamed < 4 * MAX_SOURCE_BYTES, `the server got to write ${streamed} bytes`);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test('with `within`, a directory swapped for a symlink to the outside between resolve and open never lets an outside file be read', async () => {
  const race = join(dir, 'race');
  const inner = join(race, 'root');
  mkdirSync(join(inner, 'd'), { recursive: true });
  mkdirSync(join(race, 'out'));
  writeFileSync(join(inner, 'd/f.yaml'), 'INSIDE');
  writeFileSync(join(race, 'out/f.yaml'), 'OUTSIDE');
  const d = join(inner, 'd');
  // The racer is another process: it swaps d ↔ a link to ../out as fast as it can, for a bounded time.
  const racer = spawn(process.execPath, ['-e', `const fs=require('fs');const d=${JSON.stringify(d)};const end=Date.now()+2500;while(Date.now()<end){try{fs.renameSync(d,d+'.real');fs.symlinkSync(${JSON.stringify(join(race, 'out'))},d);fs.unlinkSync(d);fs.renameSync(d+'.real',d)}catch{}}`]);
  const exited = new Promise((r) => racer.once('exit', r));
  const seen: Record<string, number> = {};
  try {
    await new Promise((r) => setTimeout(r, 100));
    const end = Date.now() + 1500;
    while (Date.now() < end) {
      let got: string;
      try {
        got = readBoundedText(join(inner, 'd/f.yaml'), { within: inner });
      } catch (e) {
        got = (e as { code?: string }).code ?? 'error';
      }
      seen[got] = (seen[got] ?? 0) + 1;
    }
  } finally {
    racer.kill('SIGKILL');
    await exited;
  }
  assert.is(seen.OUTSIDE, undefined, JSON.stringify(seen));
});

test.run();
