// src/node/nonblocking.ts: when the pipe handle can be had quietly, and that it is always closed again. Fake
// bindings only: a real handle on this runner's descriptors would change them (the e2e suite covers the real
// descriptors through the bundle: test/e2e/stdin-now.test.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeNonBlocking, type PipeBinding } from '../../src/node/nonblocking.ts';

function fakeBinding(openResult: number | Error) {
  const calls: string[] = [];
  class Pipe {
    constructor(type: number) {
      calls.push(`new ${type}`);
    }
    open(fd: number) {
      calls.push(`open ${fd}`);
      if (openResult instanceof Error) throw openResult;
      return openResult;
    }
    close() {
      calls.push('close');
    }
  }
  return { calls, binding: (): PipeBinding => ({ Pipe, constants: { SOCKET: 7 } }) };
}

test('opens a SOCKET-type pipe handle on the descriptor and closes it again', () => {
  const f = fakeBinding(0);
  assert.is(makeNonBlocking(1, f.binding), true);
  assert.equal(f.calls, ['new 7', 'open 1', 'close']);
});

test('a failed open (e.g. EINVAL: not a pipe) answers false and still closes the handle', () => {
  const f = fakeBinding(-22);
  assert.is(makeNonBlocking(0, f.binding), false);
  assert.equal(f.calls, ['new 7', 'open 0', 'close']);
  const g = fakeBinding(new Error('boom'));
  assert.is(makeNonBlocking(0, g.binding), false);
  assert.equal(g.calls, ['new 7', 'open 0', 'close'], 'closed after a throwing open too');
});

test('no binding, a binding that throws (permission model), or one without Pipe: false', () => {
  assert.is(makeNonBlocking(0, () => undefined), false);
  assert.is(
    makeNonBlocking(0, () => {
      throw Object.assign(new Error('Access to this API has been restricted'), { code: 'ERR_ACCESS_DENIED' });
    }),
    false,
  );
  assert.is(makeNonBlocking(0, () => ({}) as PipeBinding), false);
});

test('process.binding wrapped by --pending-deprecation (it would print DEP0111) is not called', () => {
  const proc = process as unknown as { binding: unknown };
  const original = proc.binding;
  let called = 0;
  proc.binding = function deprecated() {
    called++;
    return {};
  };
  try {
    assert.is(makeNonBlocking(0), false);
    assert.is(called, 0);
  } finally {
    proc.binding = original;
  }
});

test('a Node that warns about process.binding(\'pipe_wrap\') (runtime deprecation): not used, and no warning printed', () => {
  const proc = process as unknown as { binding: unknown };
  const original = proc.binding;
  const emitWarning = process.emitWarning;
  const printed: string[] = [];
  const recorder = ((w: string) => printed.push(w)) as typeof process.emitWarning;
  process.emitWarning = recorder;
  let opened = 0;
  proc.binding = function binding(name: string) {
    process.emitWarning(`Access to process.binding('${name}') is deprecated.`, 'DeprecationWarning', 'DEP0111');
    return {
      Pipe: class {
        open() {
          opened++;
          return 0;
        }
        close() {}
      },
      constants: { SOCKET: 0 },
    };
  };
  try {
    assert.is(makeNonBlocking(0), false);
    assert.is(opened, 0, 'the handle is not opened');
    assert.equal(printed, [], 'the warning is not passed on');
    assert.is(process.emitWarning, recorder, 'emitWarning is put back');
  } finally {
    proc.binding = original;
    process.emitWarning = emitWarning;
  }
});

test.run();
