// Node's plain-text warning printer replaced by a JSON log line (src/node/json-warnings.ts), with a fake process.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { logProcessWarnings, type WarningSource } from '../../src/node/json-warnings.ts';
import { Redactor } from '../../src/log/redactor.ts';

function fakeProcess(o: { printer?: boolean; execArgv?: string[]; env?: Record<string, string> } = {}) {
  const listeners: Function[] = o.printer === false ? [] : [function onWarning() {}];
  const proc: WarningSource = {
    listeners: () => [...listeners],
    removeListener: (_e, fn) => listeners.splice(listeners.indexOf(fn), 1),
    on: (_e, fn) => listeners.push(fn),
    execArgv: o.execArgv ?? [],
    env: o.env ?? {},
    pid: 42,
  };
  const emit = (w: Error) => listeners.forEach((l) => l(w));
  return { proc, listeners, emit };
}

const warning = (name: string, message: string, code?: string) => Object.assign(new Error(message), { name, code });

test('the printer is replaced: one JSON line per warning, secrets redacted', () => {
  const f = fakeProcess();
  const lines: string[] = [];
  const r = new Redactor();
  r.add('s3cr3t-value-123');
  assert.is(logProcessWarnings(f.proc, (l) => lines.push(l), r), true);
  assert.equal(f.listeners.map((l) => l.name).includes('onWarning'), false);
  f.emit(warning('TimeoutOverflowWarning', '3000000000 does not fit into a 32-bit signed integer.'));
  f.emit(warning('Warning', 'token s3cr3t-value-123 leaked'));
  assert.is(lines.length, 2);
  assert.not.ok(lines[1].includes('s3cr3t-value-123'), lines[1]);
  assert.ok(lines[0].endsWith('\n'));
  const rec = JSON.parse(lines[0]);
  assert.equal([rec.level, rec.msg, rec.name, rec.warning, rec.pid, rec.code], ['warn', 'process warning', 'TimeoutOverflowWarning', '3000000000 does not fit into a 32-bit signed integer.', 42, undefined]);
});

test("a listener someone else added (a preload's) is kept; only Node's printer goes", () => {
  const f = fakeProcess();
  const theirs = function preloadListener() {};
  f.listeners.push(theirs);
  assert.is(logProcessWarnings(f.proc, () => {}, new Redactor()), true);
  assert.equal(f.listeners.map((l) => l.name).slice(0, 1), ['preloadListener']);
  assert.is(f.listeners.length, 2);
});

test('--trace-warnings (argv or NODE_OPTIONS) adds the stack', () => {
  for (const o of [{ execArgv: ['--trace-warnings'] }, { env: { NODE_OPTIONS: '--max-old-space-size=64 --trace-warnings' } }]) {
    const f = fakeProcess(o);
    const lines: string[] = [];
    logProcessWarnings(f.proc, (l) => lines.push(l), new Redactor());
    f.emit(warning('Warning', 'x'));
    assert.type(JSON.parse(lines[0]).stack, 'string');
  }
});

test('warnings off (no printer) stay off; --redirect-warnings keeps Node printing to its file', () => {
  const off = fakeProcess({ printer: false });
  assert.is(logProcessWarnings(off.proc, () => assert.unreachable(), new Redactor()), false);
  assert.is(off.listeners.length, 0);
  const redirected = fakeProcess({ env: { NODE_OPTIONS: '--redirect-warnings=/tmp/w.txt' } });
  assert.is(logProcessWarnings(redirected.proc, () => assert.unreachable(), new Redactor()), false);
  assert.equal(redirected.listeners.map((l) => l.name), ['onWarning']);
});

test.run();
