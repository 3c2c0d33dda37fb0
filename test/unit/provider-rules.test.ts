// The offline `custom` provider (src/provider/rules.ts): a deterministic matcher over a rules file.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createChain } from '../../src/provider/chain.ts';
import { answer, compileRules, rulesPath } from '../../src/provider/rules.ts';
import { deadUrl } from '../helpers/fake-llm-server.ts';
import { primitive } from './helpers/fakes.ts';
import { prov, rejection, setup, signal, sys, user } from './provider-fixtures.ts';

const enc = (s: string) => new TextEncoder().encode(s);

const YAML = `
rules:
  - match: "^(hi|hello)\\\\b"
    flags: i
    message: "Hello! I am running offline."
  - match: "read (?<file>\\\\S+)"
    tool_call: { tool: file-read, args: { path: "{{file}}", note: "asked: {{input}}" } }
  - contains: "TIME"
    flags: i
    tool_call: { tool: clock }
  - contains: "debug"
    raw: "not json at all"
default:
  message: "offline: no rule for that"
`;

const rules = compileRules('/r/rules.yaml', enc(YAML));

test('first match wins; regex flags; named groups and {{input}} filled into args as strings', () => {
  assert.is(answer(rules, [sys('s'), user('Hello there')]), '{"message":{"content":"Hello! I am running offline."}}');
  assert.is(answer(rules, [user('please read /etc/hosts, hi')]), '{"tool_call":{"tool":"file-read","args":{"path":"/etc/hosts,","note":"asked: please read /etc/hosts, hi"}}}');
  assert.is(answer(rules, [user('what time is it?')]), '{"tool_call":{"tool":"clock","args":{}}}');
  assert.is(answer(rules, [user('debug')]), 'not json at all');
  assert.is(answer(rules, [user('something else')]), '{"message":{"content":"offline: no rule for that"}}');
});

test('a captured value with quotes stays a JSON string value (never re-parsed)', () => {
  assert.is(answer(rules, [user('read a"},"x":{"')]), '{"tool_call":{"tool":"file-read","args":{"path":"a\\"},\\"x\\":{\\"","note":"asked: read a\\"},\\"x\\":{\\""}}}');
});

test('matching uses the latest user message; after a tool result, the result is the answer (after_tool default)', () => {
  assert.is(answer(rules, [user('hi'), { role: 'assistant', content: '' }, user('what TIME')]), '{"tool_call":{"tool":"clock","args":{}}}');
  assert.is(answer(rules, [user('what time'), { role: 'assistant', content: 'x' }, { role: 'tool', content: '12:00' }]), '{"message":{"content":"12:00"}}');
  const custom = compileRules('f.json', enc('{"rules":[],"after_tool":{"message":"Tool said: {{result}}"}}'));
  assert.is(answer(custom, [user('q'), { role: 'tool', content: 'ok' }]), '{"message":{"content":"Tool said: ok"}}');
  assert.is(answer(custom, [user('q')]), '{"message":{"content":"I cannot answer that offline: no rule matches and no model is reachable."}}');
});

test('deterministic: the same conversation always gives the same answer', () => {
  const convo = [user('read x')];
  const first = answer(rules, convo);
  for (let i = 0; i < 100; i++) assert.is(answer(rules, convo), first);
});

test('invalid rules files are refused with the file and the path', () => {
  const bad = (text: string) => {
    try {
      compileRules('/r/x.yaml', enc(text));
    } catch (e) {
      return (e as Error).message;
    }
    return 'accepted';
  };
  assert.is(bad('rules:\n  - match: "a"\n    contains: "b"\n    message: m\n'), 'custom provider: /r/x.yaml: rules.0: needs exactly one of match, contains');
  assert.is(bad('rules:\n  - match: "a"\n'), 'custom provider: /r/x.yaml: rules.0: needs exactly one of message, tool_call, raw');
  // the engine's own wording follows (V8 and JavaScriptCore differ)
  assert.match(bad('rules:\n  - match: "("\n    message: m\n'), /^custom provider: \/r\/x\.yaml: rules\.0\.match: Invalid regular expression: ./);
  assert.match(bad('rules:\n  - match: "a(?=b)"\n    message: m\n'), /^custom provider: \/r\/x\.yaml: rules\.0\.match: .*lookaround/);
  assert.is(bad('rules: []\nextra: 1\n'), 'custom provider: /r/x.yaml: extra: Invalid key: Expected never but received "extra"');
  assert.is(bad('rules:\n  - contains: a\n    flags: g\n    message: m\n'), 'custom provider: /r/x.yaml: rules.0.flags: flags are a subset of "imsu"');
});

test('a catastrophic rule against a long user message answers at once (matching is linear; groups only on a match)', () => {
  const r = compileRules('/r/x.yaml', enc('rules:\n  - match: "^(a+)+$"\n    message: all a\n  - match: "(?<w>b+)$"\n    message: "{{w}}"\n'));
  const t0 = performance.now();
  assert.is(r.rules[0].test(`${'a'.repeat(40_000)}!`), undefined);
  assert.equal(r.rules[1].test('abbb')?.w, 'bbb');
  assert.ok(performance.now() - t0 < 2000, `took ${performance.now() - t0} ms`);
});

test('rulesPath: file:///abs, file:relative against the declaring file, anything else refused', () => {
  assert.is(rulesPath('file:///etc/claw/rules.yaml', '/srv/a/claw.yaml'), '/etc/claw/rules.yaml');
  assert.is(rulesPath('file://localhost/etc/r.yaml', '/srv/a/claw.yaml'), '/etc/r.yaml');
  assert.is(rulesPath('file:rules/offline.yaml', '/srv/a/claw.yaml'), '/srv/a/rules/offline.yaml');
  assert.is(rulesPath('file:my%20rules.yaml', '/srv/a/claw.yaml'), '/srv/a/my rules.yaml');
  assert.throws(() => rulesPath('https://example.com/rules', '/x'), /is not a file: URI naming a rules file/);
  assert.throws(() => rulesPath('file://host/rules', '/x'), /a file URI with a host is not a local file/);
});

test('offline fallback end to end: the network provider is down, the rules answer; limits do not apply', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-rules-'));
  try {
    writeFileSync(join(dir, 'rules.yaml'), YAML);
    const manifestFile = join(dir, 'claw.yaml');
    const offline = { ...primitive('Provider', 'offline', { protocol: 'custom', endpoint: 'file:rules.yaml', model: 'rules', auth: { type: 'none' }, limits: { requests_per_minute: 0 } }), origin: { file: manifestFile, specPath: [] } };
    const net = prov('ollama', { protocol: 'openai-compatible', endpoint: await deadUrl(), model: 'llama3', auth: { type: 'none' }, retry: { max_attempts: 1 }, fallback: [{ provider_ref: 'offline' }] });
    const { deps } = setup([net, offline]);
    const r = await createChain(deps).complete({ messages: [user('hello')], signal: signal() });
    const { fallbacks, ...answer } = r as typeof r & { fallbacks?: { provider: string }[] };
    assert.equal(answer, { text: '{"message":{"content":"Hello! I am running offline."}}', toolCallCount: 0, provider: 'offline', model: 'rules' });
    assert.equal(fallbacks?.map((f) => f.provider), ['ollama']);
    // a broken file is a failure of that provider, with the reason
    writeFileSync(join(dir, 'rules.yaml'), 'rules: 5\n');
    const { deps: d2 } = setup([{ ...offline }]);
    const e = await rejection(createChain(d2).complete({ messages: [user('hello')], signal: signal() }));
    assert.is(e.code, -32020);
    assert.is(e.data.providers[0].message, `offline: custom provider: ${dir}/rules.yaml: rules: Invalid type: Expected Array but received 5`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
