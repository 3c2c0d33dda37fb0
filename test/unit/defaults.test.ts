import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { PrimitiveKind } from '../../src/manifest/kinds.ts';
import type { ResolvedManifest, ResolvedPrimitive } from '../../src/manifest/resolved.ts';
import { applyDefaults, SANDBOX_RUNTIME_BY_LEVEL } from '../../src/manifest/defaults.ts';

function prim(kind: PrimitiveKind, name: string, spec: Record<string, any>): ResolvedPrimitive {
  return { kind, name, labels: {}, annotations: {}, spec, origin: { file: `${name}.yaml`, specPath: ['spec'] } };
}

function manifest(over: Partial<ResolvedManifest> = {}): ResolvedManifest {
  return {
    generation: '0.3',
    claw: '0.3.0',
    file: 'claw.yaml',
    name: 'bot',
    labels: {},
    annotations: {},
    identity: prim('Identity', 'bot', { personality: 'p' }),
    providers: [prim('Provider', 'p', { protocol: 'custom', endpoint: 'http://x', model: 'm', auth: { type: 'none' } })],
    channels: [],
    tools: [],
    skills: [],
    worldModels: [],
    policies: [],
    ...over,
  };
}

test('identity: autonomy supervised, locale en-US; explicit values kept', () => {
  const m = manifest();
  applyDefaults(m);
  assert.equal(m.identity.spec, { personality: 'p', autonomy: 'supervised', locale: 'en-US' });
  const k = manifest({ identity: prim('Identity', 'bot', { personality: 'p', autonomy: 'observer', locale: 'fr-FR' }) });
  applyDefaults(k);
  assert.is(k.identity.spec.autonomy, 'observer');
  assert.is(k.identity.spec.locale, 'fr-FR');
});

test('provider: streaming false, transport http, capabilities [text]; explicit values kept', () => {
  const m = manifest();
  m.providers.push(prim('Provider', 'q', { streaming: true, transport: 'websocket', capabilities: ['text', 'audio'] }));
  applyDefaults(m);
  assert.is(m.providers[0].spec.streaming, false);
  assert.is(m.providers[0].spec.transport, 'http');
  assert.equal(m.providers[0].spec.capabilities, ['text']);
  assert.equal(m.providers[1].spec, { streaming: true, transport: 'websocket', capabilities: ['text', 'audio'] });
});

test('channel: trigger max_parallel 1 / overlap_policy skip only inside an existing trigger', () => {
  const m = manifest({
    channels: [
      prim('Channel', 'cron', { type: 'cron', trigger: { schedule: '* * * * *' } }),
      prim('Channel', 'q', { type: 'queue', trigger: { queue_name: 'x', max_parallel: 4, overlap_policy: 'queue' } }),
      prim('Channel', 'cli', { type: 'cli', access_control: { mode: 'open' } }),
    ],
  });
  applyDefaults(m);
  assert.equal(m.channels[0].spec.trigger, { schedule: '* * * * *', max_parallel: 1, overlap_policy: 'skip' });
  assert.equal(m.channels[1].spec.trigger, { queue_name: 'x', max_parallel: 4, overlap_policy: 'queue' });
  assert.equal(m.channels[2].spec, { type: 'cli', access_control: { mode: 'open' } });
});

test('tool composite false; world model scope agent-wide', () => {
  const m = manifest({
    tools: [prim('Tool', 't', { description: 'd' }), prim('Tool', 'c', { composite: true, skill_ref: 's' })],
    worldModels: [prim('WorldModel', 'w', { backend: { type: 'custom', ref: 'x' } }), prim('WorldModel', 'v', { scope: 'task-scoped' })],
  });
  applyDefaults(m);
  assert.is(m.tools[0].spec.composite, false);
  assert.is(m.tools[1].spec.composite, true);
  assert.is(m.worldModels[0].spec.scope, 'agent-wide');
  assert.is(m.worldModels[1].spec.scope, 'task-scoped');
});

test('sandbox runtime inferred from level only where the spec pins one', () => {
  const runtimeFor = (spec: Record<string, any>) => {
    const m = manifest({ sandbox: prim('Sandbox', 's', spec) });
    applyDefaults(m);
    return m.sandbox!.spec.runtime;
  };
  assert.is(runtimeFor({ level: 'container' }), 'docker');
  assert.is(runtimeFor({ level: 'wasm' }), 'wasmtime');
  assert.is(runtimeFor({ level: 'none' }), undefined);
  assert.is(runtimeFor({ level: 'process' }), undefined);
  assert.is(runtimeFor({ level: 'vm' }), undefined);
  assert.is(runtimeFor({ level: 'constructor' }), undefined);
  assert.is(runtimeFor({ level: 'container', runtime: 'apple-container' }), 'apple-container');
  assert.equal(Object.keys(SANDBOX_RUNTIME_BY_LEVEL).sort(), ['container', 'wasm']);
  const none = manifest({ sandbox: prim('Sandbox', 's', { level: 'none' }) });
  applyDefaults(none);
  assert.not.ok('runtime' in none.sandbox!.spec);
});

test('policy prompt_injection.detection pattern only when the block exists', () => {
  const m = manifest({
    policies: [
      prim('Policy', 'a', { rules: [], prompt_injection: { action: 'warn' } }),
      prim('Policy', 'b', { rules: [] }),
      prim('Policy', 'c', { rules: [], prompt_injection: { detection: 'none' } }),
    ],
  });
  applyDefaults(m);
  assert.equal(m.policies[0].spec.prompt_injection, { action: 'warn', detection: 'pattern' });
  assert.equal(m.policies[1].spec, { rules: [] });
  assert.equal(m.policies[2].spec.prompt_injection, { detection: 'none' });
});

test('telemetry: sampling.rate 1, events/metrics/redaction defaults (0.3)', () => {
  const m = manifest({ telemetry: prim('Telemetry', 't', { exporters: [{ type: 'console' }], events: { tool_calls: false }, sampling: { rate: 0.25 } }) });
  applyDefaults(m);
  assert.equal(m.telemetry!.spec, {
    exporters: [{ type: 'console' }],
    events: { tool_calls: false, memory_ops: false, swarm_ops: false, lifecycle: true, errors: true, world_model_ops: false, planning_ops: false },
    sampling: { rate: 0.25 },
    metrics: { token_usage: true, cost_usd: false, latency_histogram: true, prediction_error: false, retrieval_hit_rate: false, plan_revision_count: false },
    redaction: { strip_arguments: false, strip_results: false },
  });
  const bare = manifest({ telemetry: prim('Telemetry', 't', { exporters: [] }) });
  applyDefaults(bare);
  assert.equal(bare.telemetry!.spec.sampling, { rate: 1 });
});

test('telemetry: 0.2 manifests get only the 0.2 event/metric keys', () => {
  const m = manifest({ generation: '0.2', claw: '0.2.0', telemetry: prim('Telemetry', 't', { exporters: [] }) });
  applyDefaults(m);
  assert.equal(m.telemetry!.spec.events, { tool_calls: true, memory_ops: false, swarm_ops: false, lifecycle: true, errors: true });
  assert.equal(m.telemetry!.spec.metrics, { token_usage: true, cost_usd: false, latency_histogram: true });
});

test('idempotent, and never touches malformed values', () => {
  const m = manifest({
    sandbox: prim('Sandbox', 's', { level: 'container' }),
    telemetry: prim('Telemetry', 't', { exporters: [], sampling: 'all' }),
    channels: [prim('Channel', 'c', { type: 'cron', trigger: 'often' })],
  });
  applyDefaults(m);
  const once = JSON.stringify(m);
  applyDefaults(m);
  assert.is(JSON.stringify(m), once);
  assert.is(m.telemetry!.spec.sampling, 'all');
  assert.is(m.channels[0].spec.trigger, 'often');
  const n = manifest();
  n.identity.spec = null as any;
  n.providers[0].spec = 'x' as any;
  applyDefaults(n);
  assert.is(n.identity.spec, null);
});

test.run();
