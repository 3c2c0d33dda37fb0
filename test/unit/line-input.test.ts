// LineInput (src/cli/line-input.ts): lines in order to whoever asks first; a withdrawn request
// (an approval question that expired) leaves the next line to the next caller.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventEmitter } from 'node:events';
import { LineInput } from '../../src/cli/line-input.ts';

function source() {
  const e = new EventEmitter();
  return { src: e as any, write: (s: string) => e.emit('data', Buffer.from(s)), end: () => e.emit('end') };
}

test('lines in order, CRLF and a last line without newline, then undefined', async () => {
  const s = source();
  const input = new LineInput(s.src);
  s.write('one\r\ntw');
  s.write('o\nthree');
  s.end();
  assert.equal([await input.next(), await input.next(), await input.next(), await input.next()], ['one', 'two', 'three', undefined]);
});

test('a withdrawn request resolves undefined and the line goes to the next caller', async () => {
  const s = source();
  const input = new LineInput(s.src);
  const q = new AbortController();
  const question = input.next(q.signal);
  const message = input.next();
  q.abort();
  assert.is(await question, undefined);
  s.write('hello\n');
  assert.is(await message, 'hello');
});

test('an already aborted signal with no buffered line resolves undefined; a buffered line is still given', async () => {
  const s = source();
  const input = new LineInput(s.src);
  const q = new AbortController();
  q.abort();
  assert.is(await input.next(q.signal), undefined);
  s.write('x\n');
  assert.is(await input.next(q.signal), 'x');
});

test('a request answered before its signal aborts keeps its line', async () => {
  const s = source();
  const input = new LineInput(s.src);
  const q = new AbortController();
  const p = input.next(q.signal);
  s.write('y\n');
  q.abort();
  assert.is(await p, 'y');
  s.write('next\n');
  assert.is(await input.next(), 'next');
});

test.run();
