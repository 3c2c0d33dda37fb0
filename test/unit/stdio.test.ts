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

test('readWaiting: what is already waiting is delivered at once, before the stream, a split frame joining across', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const waiting = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"a"}\n{"jsonrpc":"2.0","id":2,');
  let calls = 0;
  const t = createStdioTransport({ input: () => input, output: () => output, readNow: () => (calls++, waiting) });
  const frames: InboundFrame[] = [];
  t.readWaiting();
  assert.is(calls, 0, 'nothing is read before start()');
  t.start((f) => frames.push(f));
  assert.is(calls, 0, 'start() does not read: the runtime says when (run.ts, after --start opened its session)');
  t.readWaiting();
  assert.is(calls, 1);
  assert.equal(frames.map((f) => f.payload), [{ text: '{"jsonrpc":"2.0","id":1,"method":"a"}' }], 'delivered at once, no event-loop turn');
  input.write('"method":"b"}\n{"jsonrpc":"2.0","id":3,"method":"c"}\n');
  await until(() => frames.length === 3);
  assert.equal(
    frames.map((f) => f.payload),
    [{ text: '{"jsonrpc":"2.0","id":1,"method":"a"}' }, { text: '{"jsonrpc":"2.0","id":2,"method":"b"}' }, { text: '{"jsonrpc":"2.0","id":3,"method":"c"}' }],
  );
  // Nothing waiting: nothing delivered, the stream alone.
  const t2 = createStdioTransport({ input: () => new PassThrough(), output: () => output, readNow: () => undefined });
  const none: InboundFrame[] = [];
  t2.start((f) => none.push(f));
  t2.readWaiting();
  assert.equal(none, []);
});

test('readNow + writeNow: what was waiting is answered straight to the descriptor; the streams open a turn later, and then carry everything', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const written: string[] = [];
  output.on('data', (c: Buffer) => written.push(c.toString('utf8')));
  const opened: string[] = [];
  const direct: string[] = [];
  const t = createStdioTransport({
    input: () => (opened.push('input'), input),
    output: () => (opened.push('output'), output),
    readNow: () => Buffer.from('{"jsonrpc":"2.0","id":1,"method":"a"}\n'),
    writeNow: (text) => (direct.push(text), undefined),
  });
  const frames: InboundFrame[] = [];
  t.start((f) => {
    frames.push(f);
    f.reply({ jsonrpc: '2.0', id: frames.length, result: 'r' });
  });
  t.readWaiting();
  assert.equal(opened, [], 'no stream opened before the waiting frame is answered');
  await new Promise<void>((r) => process.nextTick(r));
  assert.equal(direct, ['{"jsonrpc":"2.0","id":1,"result":"r"}\n']);
  assert.equal(opened, []);
  await new Promise<void>((r) => setImmediate(r));
  assert.equal(opened, ['output', 'input'], 'both open in the check phase');
  input.write('{"jsonrpc":"2.0","id":2,"method":"b"}\n');
  await until(() => written.length === 1);
  assert.equal(written, ['{"jsonrpc":"2.0","id":2,"result":"r"}\n']);
  assert.is(direct.length, 1, 'nothing direct once the streams are open');
});

test('writeNow that would block: the rest goes to the output stream, and so does every later write', async () => {
  const output = new PassThrough();
  const written: Buffer[] = [];
  output.on('data', (c: Buffer) => written.push(c));
  let calls = 0;
  const t = createStdioTransport({
    input: () => new PassThrough(),
    output: () => output,
    readNow: () => Buffer.from('{"jsonrpc":"2.0","id":1,"method":"a"}\n{"jsonrpc":"2.0","id":2,"method":"b"}\n'),
    writeNow: (text) => (calls++, Buffer.from(text).subarray(10)), // wrote 10 bytes, EAGAIN
  });
  const frames: InboundFrame[] = [];
  t.start((f) => frames.push(f));
  t.readWaiting();
  frames[0].reply({ jsonrpc: '2.0', id: 1, result: 'first' });
  await new Promise<void>((r) => process.nextTick(r));
  frames[1].reply({ jsonrpc: '2.0', id: 2, result: 'second' });
  await until(() => Buffer.concat(written).toString().includes('second'));
  assert.is(calls, 1);
  assert.is(Buffer.concat(written).toString(), '{"jsonrpc":"2.0","id":1,"result":"first"}\n'.slice(10) + '{"jsonrpc":"2.0","id":2,"result":"second"}\n');
});

test('nothing waiting: the streams open at once; a writeNow that throws (EPIPE) stops the output, not the runtime', async () => {
  const opened: string[] = [];
  const t = createStdioTransport({
    input: () => (opened.push('input'), new PassThrough()),
    output: () => (opened.push('output'), new PassThrough()),
    readNow: () => undefined,
    writeNow: () => {
      throw Object.assign(new Error('EPIPE'), { code: 'EPIPE' });
    },
  });
  t.start(() => {});
  assert.equal(opened, []);
  t.readWaiting();
  assert.equal(opened, ['output', 'input']);
  const u = createStdioTransport({
    input: () => new PassThrough(),
    output: () => {
      throw new Error('the stream must not be needed');
    },
    readNow: () => Buffer.from('{"jsonrpc":"2.0","id":1,"method":"a"}\n'),
    writeNow: () => {
      throw Object.assign(new Error('EPIPE'), { code: 'EPIPE' });
    },
  });
  const frames: InboundFrame[] = [];
  u.start((f) => frames.push(f));
  u.readWaiting();
  frames[0].reply({ jsonrpc: '2.0', id: 1, result: 'lost' });
  await new Promise<void>((r) => process.nextTick(r));
  frames[0].reply({ jsonrpc: '2.0', id: 1, result: 'dropped without a write' });
  await new Promise<void>((r) => process.nextTick(r));
  await u.close();
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

test.run();
