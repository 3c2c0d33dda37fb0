import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PassThrough } from 'node:stream';
import { createStdioTransport } from '../../src/transports/stdio.ts';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import { tick, until } from './helpers/fakes.ts';

function setup(maxFrameBytes?: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  const written: string[] = [];
  output.on('data', (c: Buffer) => written.push(c.toString('utf8')));
  const t = createStdioTransport({ input: () => input, output: () => output, maxFrameBytes });
  const frames: InboundFrame[] = [];
  t.start((f) => frames.push(f));
  return { input, output, written, t, frames };
}

test('name is stdio', () => {
  assert.is(setup().t.name, 'stdio');
});

test('frames delivered in order, across chunk boundaries and with several per chunk', async () => {
  const s = setup();
  s.input.write('{"jsonrpc":"2.0","id":1,');
  s.input.write('"method":"a"}\n{"jsonrpc":"2.0","id":2,"method":"b"}\n');
  s.input.write(Buffer.from('{"x":"é"}\r\n\n'));
  await until(() => s.frames.length === 3);
  assert.equal(
    s.frames.map((f) => f.payload),
    [{ text: '{"jsonrpc":"2.0","id":1,"method":"a"}' }, { text: '{"jsonrpc":"2.0","id":2,"method":"b"}' }, { text: '{"x":"é"}' }],
  );
});

test('an output whose write throws (EPIPE) stops the output, not the runtime', async () => {
  const input = new PassThrough();
  let calls = 0;
  const output = { write: () => { calls++; throw new Error('EPIPE'); }, on: () => output };
  const t = createStdioTransport({ input: () => input, output: () => output });
  const frames: InboundFrame[] = [];
  t.start((f) => frames.push(f));
  input.write('{"jsonrpc":"2.0","id":1,"method":"a"}\n');
  await until(() => frames.length === 1);
  frames[0].reply({ jsonrpc: '2.0', id: 1, result: 'lost' });
  await new Promise<void>((r) => process.nextTick(r));
  frames[0].reply({ jsonrpc: '2.0', id: 1, result: 'dropped without a write' });
  await new Promise<void>((r) => process.nextTick(r));
  assert.is(calls, 1);
  await t.close();
});

test('string chunks (setEncoding on the input) are accepted', async () => {
  const s = setup();
  s.input.setEncoding('utf8');
  s.input.write('{"a":1}\n');
  await until(() => s.frames.length === 1);
  assert.equal(s.frames[0].payload, { text: '{"a":1}' });
});

test('framing failures are delivered as error payloads', async () => {
  const s = setup(16);
  s.input.write(`${'x'.repeat(40)}\n`);
  s.input.write(Buffer.from([0xff, 0x0a]));
  s.input.write('[1]\n');
  await until(() => s.frames.length === 3);
  assert.equal(
    s.frames.map((f) => f.payload),
    [{ error: 'oversize', bytes: 40, limit: 16 }, { error: 'encoding' }, { text: '[1]' }],
  );
});

test('replies and notifications are written as one line each', async () => {
  const s = setup();
  s.input.write('{"jsonrpc":"2.0","id":1,"method":"a"}\n');
  await until(() => s.frames.length === 1);
  s.frames[0].reply({ jsonrpc: '2.0', id: 1, result: { text: 'multi\nline' } });
  s.frames[0].reply([
    { jsonrpc: '2.0', id: 2, result: 1 },
    { jsonrpc: '2.0', id: 3, error: { code: -32601, message: 'x' } },
  ]);
  s.t.notify({ jsonrpc: '2.0', method: 'claw.heartbeat', params: { state: 'READY' } });
  await tick(5);
  const out = s.written.join('');
  const lines = out.split('\n');
  assert.is(lines.pop(), '', 'output ends with a newline');
  assert.is(lines.length, 3);
  assert.equal(JSON.parse(lines[0]), { jsonrpc: '2.0', id: 1, result: { text: 'multi\nline' } });
  assert.ok(Array.isArray(JSON.parse(lines[1])));
  assert.is(JSON.parse(lines[2]).method, 'claw.heartbeat');
});

test('closed resolves on end; a last line without newline is delivered first', async () => {
  const s = setup();
  let closed = false;
  void s.t.closed.then(() => (closed = true));
  s.input.write('{"last":true}');
  await tick(5);
  assert.is(s.frames.length, 0);
  assert.is(closed, false);
  s.input.end();
  await s.t.closed;
  assert.equal(s.frames.map((f) => f.payload), [{ text: '{"last":true}' }]);
});

test('closed resolves on close and on input error; close() resolves it too', async () => {
  const a = setup();
  a.input.destroy();
  await a.t.closed;
  const b = setup();
  b.input.destroy(new Error('EIO'));
  await b.t.closed;
  const c = setup();
  await c.t.close();
  await c.t.closed;
});

test("output 'error' (EPIPE) does not throw; later writes are dropped", async () => {
  const s = setup();
  s.input.write('{"jsonrpc":"2.0","id":1,"method":"a"}\n');
  await until(() => s.frames.length === 1);
  const epipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
  let uncaught = 0;
  const on = () => uncaught++;
  process.on('uncaughtException', on);
  try {
    s.output.destroy(epipe);
    await tick(5);
    s.frames[0].reply({ jsonrpc: '2.0', id: 1, result: 'after-epipe' });
    s.t.notify({ jsonrpc: '2.0', method: 'claw.heartbeat' });
    await tick(5);
  } finally {
    process.off('uncaughtException', on);
  }
  assert.is(uncaught, 0);
  assert.not.ok(s.written.join('').includes('after-epipe'));
});

test('a writer that throws stops the output, not the runtime; replies of one burst go out in one write', async () => {
  const input = new PassThrough();
  const writes: string[] = [];
  let fail = false;
  const output = {
    write(x: string) {
      if (fail) throw new Error('write after end');
      writes.push(x);
    },
    on() {},
  };
  const t = createStdioTransport({ input: () => input, output: () => output });
  const frames: InboundFrame[] = [];
  t.start((f) => frames.push(f));
  input.write('{"jsonrpc":"2.0","id":1,"method":"a"}\n{"jsonrpc":"2.0","id":2,"method":"b"}\n');
  await until(() => frames.length === 2);
  frames[0].reply({ jsonrpc: '2.0', id: 1, result: 1 });
  frames[1].reply({ jsonrpc: '2.0', id: 2, result: 2 });
  await tick(1);
  assert.equal(writes, ['{"jsonrpc":"2.0","id":1,"result":1}\n{"jsonrpc":"2.0","id":2,"result":2}\n']);
  let uncaught = 0;
  const on = () => uncaught++;
  process.on('uncaughtException', on);
  try {
    fail = true;
    frames[0].reply({ jsonrpc: '2.0', id: 1, result: 'x' });
    await tick(5);
    fail = false;
    frames[1].reply({ jsonrpc: '2.0', id: 2, result: 'dropped' });
    await tick(5);
  } finally {
    process.off('uncaughtException', on);
  }
  assert.is(uncaught, 0);
  assert.is(writes.length, 1, 'nothing written after the writer failed');
});

test('a reader that stops reading holds the input (back-pressure): no reply buffers without bound, none is lost', async () => {
  // An input that delivers one chunk per read, like a pipe; an output with a 1 KB high-water mark that nobody reads.
  const input = new PassThrough({ highWaterMark: 1024 });
  const output = new PassThrough({ highWaterMark: 1024 });
  const t = createStdioTransport({ input: () => input, output: () => output, holdOutputBytes: 8 * 1024 });
  let answered = 0;
  t.start((f) => {
    const id = JSON.parse((f.payload as { text: string }).text).id;
    answered++;
    f.reply({ jsonrpc: '2.0', id, result: 'x'.repeat(200) });
  });
  const n = 2000;
  const lines = Array.from({ length: n }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"claw.status"}\n`);
  // 20 requests per chunk, one chunk per turn of the event loop, as a pipe delivers them; the client waits
  // while the input is full, as a client writing to a pipe does.
  let sent = 0;
  const pump = () => {
    if (sent >= n) return void input.end();
    const ok = input.write(lines.slice(sent, (sent += 20)).join(''));
    if (ok) setImmediate(pump);
    else input.once('drain', pump);
  };
  pump();
  await tick(100);
  // Without back-pressure every request was read and its reply queued (~450 KB in the output's buffer).
  assert.ok(answered < 100, `read ${answered} of ${n} requests while nothing read the replies`);
  assert.ok(output.writableLength < 24 * 1024, `${output.writableLength} bytes queued`);
  // The reader comes back: every request is answered, in order.
  let text = '';
  output.on('data', (c: Buffer) => (text += c.toString('utf8')));
  await until(() => text.split('\n').length - 1 === n, 5000);
  assert.equal(text.split('\n').slice(0, -1).map((l) => JSON.parse(l).id), Array.from({ length: n }, (_, i) => i));
  await t.closed; // stdin's end still arrives once the input is read again
});

test.run();
