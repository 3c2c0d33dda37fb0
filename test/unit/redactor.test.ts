import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Redactor, REDACTED } from '../../src/log/redactor.ts';

test('plain occurrences are replaced, all of them', () => {
  const r = new Redactor();
  r.add('s3cr3t-value');
  assert.is(r.redact('a s3cr3t-value b s3cr3t-value'), `a ${REDACTED} b ${REDACTED}`);
  assert.is(r.redact('nothing here'), 'nothing here');
});

test('JSON-escaped forms are replaced (quotes, backslashes, newlines, control chars)', () => {
  for (const secret of ['pa"ss"word', 'back\\slash\\key', 'line1\nline2', 'tab\there', 'ctl\u0001x', 'm"i\\x\ne\u0007d']) {
    const r = new Redactor();
    r.add(secret);
    const line = JSON.stringify({ msg: 'x', token: secret, nested: { again: `Bearer ${secret}` } });
    const out = r.redact(line);
    assert.not.ok(out.includes(secret), `raw ${JSON.stringify(secret)}`);
    assert.not.ok(out.includes(JSON.stringify(secret).slice(1, -1)), `escaped ${JSON.stringify(secret)}`);
    const parsed = JSON.parse(out);
    assert.is(parsed.token, REDACTED);
    assert.is(parsed.nested.again, `Bearer ${REDACTED}`);
  }
});

test('percent-encoded forms are replaced (a URL an error or a proxy echoes), upper- or lower-case hex', () => {
  const r = new Redactor();
  r.add('12345:AbC/def+gh=ij é');
  const upper = encodeURIComponent('12345:AbC/def+gh=ij é');
  const lower = upper.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase());
  assert.is.not(upper, lower);
  for (const form of [upper, lower]) {
    const out = r.redact(`fetch failed: https://api.example/bot${form}/getMe`);
    assert.is(out, `fetch failed: https://api.example/bot${REDACTED}/getMe`, form);
  }
  // A secret with nothing to encode has only its plain form, and a lone surrogate (no percent-encoding) is no error.
  r.add('plain-token-value');
  r.add('lone-\ud800-half');
  assert.is(r.redact('x plain-token-value lone-\ud800-half'), `x ${REDACTED} ${REDACTED}`);
});

test('non-ASCII secrets', () => {
  const r = new Redactor();
  r.add('clé-secrète-日本');
  assert.is(JSON.parse(r.redact(JSON.stringify({ k: 'clé-secrète-日本' }))).k, REDACTED);
});

test('very short values (< 4 chars) are not registered (they would mask ordinary text)', () => {
  const r = new Redactor();
  r.add('abc');
  r.add('');
  assert.is(r.redact('abc abc'), 'abc abc');
  r.add('abcd');
  assert.is(r.redact('abcd'), REDACTED);
});

test('several secrets', () => {
  const r = new Redactor();
  r.add('first-secret');
  r.add('second-secret');
  assert.is(r.redact('first-secret/second-secret'), `${REDACTED}/${REDACTED}`);
});

test('overlapping secrets: the longer value leaves no tail behind, whatever the registration order', () => {
  for (const order of [
    ['tok-1234', 'tok-1234-abcdef'],
    ['tok-1234-abcdef', 'tok-1234'],
  ]) {
    const r = new Redactor();
    for (const s of order) r.add(s);
    const out = r.redact('key=tok-1234-abcdef');
    assert.is(out, `key=${REDACTED}`, `order ${JSON.stringify(order)} → ${out}`);
  }
});

test('adding the same value twice is harmless', () => {
  const r = new Redactor();
  r.add('dup-secret');
  r.add('dup-secret');
  assert.is(r.redact('dup-secret'), REDACTED);
});

test.run();
