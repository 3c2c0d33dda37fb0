// Telemetry (spec §5.11) end to end: a file exporter in the manifest, real calls through dist/claw.mjs,
// the JSONL file read back after shutdown.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { l3Manifest, IDENTITY, rid } from './memory-agent.ts';
import { initParams, startClaw } from './helpers/claw-process.ts';

const TELEMETRY = `  telemetry:
    inline:
      exporters:
        - type: "file"
          path: "out/telemetry.jsonl"
      events: { memory_ops: true }
      redaction: { strip_arguments: true }
`;

test('lifecycle, tool calls, errors and memory ops reach the file exporter; arguments stripped; nothing of the content', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-e2e-telemetry-'));
  writeFileSync(join(dir, 'claw.yaml'), l3Manifest() + TELEMETRY);
  writeFileSync(join(dir, 'claw.runtime.yaml'), 'tools:\n  search: { builtin: echo }\n');
  const c = startClaw(['run', join(dir, 'claw.yaml')], { cwd: dir });
  const init = await c.request('claw.initialize', initParams(), 'init');
  assert.ok(init.result, JSON.stringify(init) + c.stderr());
  const ok = await c.request('claw.tool.call', { name: 'search', arguments: { query: 'very private words' }, context: { identity: IDENTITY, request_id: rid() } });
  assert.ok(ok.result, JSON.stringify(ok));
  const bad = await c.request('claw.tool.call', { name: 'nope', arguments: {}, context: { identity: IDENTITY, request_id: rid() } });
  assert.is(bad.error.code, -32602);
  const st = await c.request('claw.memory.store', { store: 'context', entries: [{ content: 'remember the secret garden' }], context: { request_id: rid() } });
  assert.ok(st.result, JSON.stringify(st));
  const down = await c.request('claw.shutdown', {}, 'down');
  assert.ok(down.result);
  assert.is(await c.end(), 0);

  const text = readFileSync(join(dir, 'out', 'telemetry.jsonl'), 'utf8');
  const events = text.trim().split('\n').map((l) => JSON.parse(l));
  for (const e of events) {
    assert.is(e.claw, '0.3.0');
    assert.is(e.agent, IDENTITY);
    assert.match(e.timestamp, /^\d{4}-\d\d-\d\dT/);
  }
  const transitions = events.filter((e) => e.event === 'lifecycle.transition').map((e) => `${e.from}>${e.to}`);
  assert.equal(transitions, ['INIT>STARTING', 'STARTING>READY', 'READY>STOPPING', 'STOPPING>STOPPED']);
  const call = events.find((e) => e.event === 'tool.call');
  // `search` is bound to the echo builtin, which wants `text`: the tool ran and reported an error result.
  assert.equal([call.tool, call.status, call.origin, call.arguments], ['search', 'tool_error', 'operator', '[REDACTED]']);
  assert.type(call.duration_ms, 'number');
  const err = events.find((e) => e.event === 'error');
  assert.equal([err.method, err.code], ['claw.tool.call', -32602]);
  const mem = events.find((e) => e.event === 'memory.store');
  assert.equal([mem.category, mem.store, mem.status], ['memory_ops', 'context', 'ok']);
  assert.ok(events.some((e) => e.event === 'metrics.latency'));
  // Arguments are stripped; stored content is never an event field.
  assert.not.ok(text.includes('very private words'));
  assert.not.ok(text.includes('secret garden'));
});

test('without a Telemetry primitive nothing is written and the agent behaves the same', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-e2e-telemetry-'));
  writeFileSync(join(dir, 'claw.yaml'), l3Manifest());
  writeFileSync(join(dir, 'claw.runtime.yaml'), 'tools:\n  search: { builtin: echo }\n');
  const c = startClaw(['run', join(dir, 'claw.yaml')], { cwd: dir });
  assert.ok((await c.request('claw.initialize', initParams(), 'init')).result);
  const ok = await c.request('claw.tool.call', { name: 'search', arguments: { query: 'q' }, context: { identity: IDENTITY, request_id: rid() } });
  assert.ok(ok.result, JSON.stringify(ok));
  assert.is(await c.end(), 0);
  assert.not.ok(existsSync(join(dir, 'out')));
});

test.run();
