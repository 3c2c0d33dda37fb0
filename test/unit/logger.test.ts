import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, type LogLevel } from '../../src/log/logger.ts';
import { Redactor, REDACTED } from '../../src/log/redactor.ts';

function setup(level?: LogLevel) {
  const lines: string[] = [];
  const redactor = new Redactor();
  const log = createLogger({ write: (l) => lines.push(l), level, redactor, now: () => Date.parse('2026-02-22T10:30:00.000Z') });
  return { lines, redactor, log: log as typeof log & { setLevel(l: LogLevel): void } };
}

test('each line is one JSON object with ts, level, msg and the fields, newline-terminated', () => {
  const { lines, log } = setup();
  log.info('session started', { client: 'op', n: 1, nested: { a: [1, 2] }, multi: 'a\nb' });
  assert.is(lines.length, 1);
  const line = lines[0];
  assert.ok(line.endsWith('\n'));
  assert.is(line.indexOf('\n'), line.length - 1, 'exactly one line');
  assert.equal(JSON.parse(line), { ts: '2026-02-22T10:30:00.000Z', level: 'info', msg: 'session started', client: 'op', n: 1, nested: { a: [1, 2] }, multi: 'a\nb' });
});

test('a message without fields', () => {
  const { lines, log } = setup();
  log.warn('careful');
  assert.equal(JSON.parse(lines[0]), { ts: '2026-02-22T10:30:00.000Z', level: 'warn', msg: 'careful' });
});

test('level filtering: default info drops debug', () => {
  const { lines, log } = setup();
  log.debug('d');
  log.info('i');
  log.warn('w');
  log.error('e');
  assert.equal(lines.map((l) => JSON.parse(l).level), ['info', 'warn', 'error']);
});

test('level filtering: each minimum level', () => {
  const cases: [LogLevel, string[]][] = [
    ['debug', ['debug', 'info', 'warn', 'error']],
    ['info', ['info', 'warn', 'error']],
    ['warn', ['warn', 'error']],
    ['error', ['error']],
  ];
  for (const [level, want] of cases) {
    const { lines, log } = setup(level);
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    assert.equal(lines.map((l) => JSON.parse(l).level), want, level);
  }
});

test('setLevel changes the minimum at run time', () => {
  const { lines, log } = setup('error');
  log.info('hidden');
  log.setLevel('debug');
  log.debug('shown');
  assert.equal(lines.map((l) => JSON.parse(l).msg), ['shown']);
});

test('a secret value in a field never appears in the line', () => {
  const { lines, log, redactor } = setup();
  redactor.add('sk-live-0123456789');
  log.info('calling provider', { auth: 'Bearer sk-live-0123456789', list: ['x', 'sk-live-0123456789'] });
  log.error('sk-live-0123456789 in the message too');
  for (const l of lines) {
    assert.not.ok(l.includes('sk-live-0123456789'), l);
    JSON.parse(l);
  }
  assert.is(JSON.parse(lines[0]).auth, `Bearer ${REDACTED}`);
});

test('a secret with quotes and backslashes (JSON-escaped in the line) never appears', () => {
  const { lines, log, redactor } = setup();
  const secret = 'p"a\\ss"w0rd';
  redactor.add(secret);
  log.info('x', { password: secret, error: `login failed for ${secret}` });
  const line = lines[0];
  assert.not.ok(line.includes(secret));
  assert.not.ok(line.includes(JSON.stringify(secret).slice(1, -1)), line);
  assert.equal(JSON.parse(line).password, REDACTED);
});

test('each line stays one JSON object when a secret\'s text also occurs outside a string (e.g. a numeric PIN)', () => {
  const { lines, log, redactor } = setup();
  redactor.add('482913'); // a pairing code / PIN
  log.info('pairing', { code: 482913, attempts: 1 });
  log.info('bool-like', { ok: true });
  for (const l of lines) {
    assert.not.ok(l.includes('482913'), l);
    let parsed: unknown;
    try {
      parsed = JSON.parse(l);
    } catch {
      assert.unreachable(`line is not valid JSON after redaction: ${l.trim()}`);
    }
    assert.type(parsed, 'object');
  }
});

test('unserializable fields (cycle, BigInt) still give one JSON line', () => {
  const { lines, log } = setup();
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  log.info('cyclic', { cyclic });
  log.info('bigint', { n: 10n });
  assert.is(lines.length, 2);
  for (const l of lines) {
    const o = JSON.parse(l);
    assert.is(o.fields, '[unserializable]');
  }
});

test('the timestamp comes from the injected clock', () => {
  const { lines, log } = setup();
  log.info('t');
  assert.is(JSON.parse(lines[0]).ts, '2026-02-22T10:30:00.000Z');
});

test.run();
