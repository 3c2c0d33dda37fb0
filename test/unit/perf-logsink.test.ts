// createLogSink: log lines as synchronous writes to a descriptor, falling back to a queued stream
// when the descriptor would block, without losing or reordering a byte.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogSink } from '../../src/log/logger.ts';

const dec = new TextDecoder();
const eagain = () => Object.assign(new Error('EAGAIN: resource temporarily unavailable, write'), { code: 'EAGAIN' });

function fake(script: ('all' | 'eagain' | 'epipe' | number)[]) {
  const fd: string[] = [];
  const stream: string[] = [];
  let opened = 0;
  let step = 0;
  const sink = createLogSink(
    {
      writeSync(data) {
        const what = script[Math.min(step++, script.length - 1)];
        if (what === 'eagain') throw eagain();
        if (what === 'epipe') throw Object.assign(new Error('EPIPE'), { code: 'EPIPE' });
        const n = what === 'all' ? data.length : Math.min(what, data.length);
        fd.push(dec.decode(data.subarray(0, n)));
        return n;
      },
    },
    () => {
      opened++;
      return { write: (d: string | Uint8Array) => stream.push(typeof d === 'string' ? d : dec.decode(d)) };
    },
  );
  return { sink, fd, stream, opened: () => opened };
}

test('whole lines go to the descriptor; the stream is never created', () => {
  const f = fake(['all']);
  f.sink.write('{"a":1}\n');
  f.sink.write('{"b":"é"}\n');
  assert.equal(f.fd.join(''), '{"a":1}\n{"b":"é"}\n');
  assert.is(f.opened(), 0);
});

test('partial writes are continued until the line is out', () => {
  const f = fake([3, 1, 'all', 2, 'all']);
  f.sink.write('0123456789\n');
  f.sink.write('abcdef\n');
  assert.equal(f.fd.join(''), '0123456789\nabcdef\n');
  assert.is(f.opened(), 0);
});

test('EAGAIN mid-line: the rest of that line and every later line go through the stream, in order', () => {
  const f = fake(['all', 4, 'eagain', 'all']);
  f.sink.write('first\n');
  f.sink.write('second line\n');
  f.sink.write('third\n');
  f.sink.write('fourth\n');
  assert.equal(f.fd.join('') + f.stream.join(''), 'first\nsecond line\nthird\nfourth\n');
  assert.equal(f.fd.join(''), 'first\nseco');
  assert.is(f.opened(), 1, 'the fallback is created once');
});

test('EPIPE and other errors drop the line without throwing', () => {
  const f = fake(['epipe', 'all']);
  f.sink.write('lost\n');
  f.sink.write('kept\n');
  assert.equal(f.fd.join(''), 'kept\n');
  assert.is(f.opened(), 0);
});

test('a real descriptor: fd 2 of this process accepts a line', () => {
  // Smoke test through node:fs, as targets/node-env.ts wires it (an empty line keeps the output clean).
  return import('node:fs').then(({ writeSync }) => {
    const sink = createLogSink({ writeSync: (d) => writeSync(2, d) }, () => process.stderr);
    sink.write('');
  });
});

test('a real non-blocking pipe that fills up: every line arrives, in order, none torn', async () => {
  const { spawn } = await import('node:child_process');
  const { writeSync } = await import('node:fs');
  // The reader starts late, so the pipe (64 KiB; a few hundred KiB for a socketpair) fills and
  // writeSync meets EAGAIN: 16,000 lines are about 2.6 MB.
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => process.stdin.pipe(process.stdout), 300)'], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const fd = (child.stdin as unknown as { _handle?: { fd?: number } })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) return; // not a platform with pipe descriptors
    let fellBack = false;
    const sink = createLogSink({ writeSync: (d) => writeSync(fd, d) }, () => {
      fellBack = true;
      return child.stdin;
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    const lines: string[] = [];
    for (let i = 0; i < 16000; i++) lines.push(`${JSON.stringify({ i, pad: 'x'.repeat(100 + (i % 50)) })}\n`);
    for (const l of lines) sink.write(l);
    assert.ok(fellBack, 'the pipe filled up, so the sink fell back to the stream');
    child.stdin.end();
    await new Promise<void>((resolve) => child.stdout.on('end', () => resolve()));
    assert.ok(Buffer.concat(chunks).toString('utf8') === lines.join(''), 'the reader got every line, in order');
  } finally {
    child.kill();
  }
});

test.run();
