import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RawIssue } from '../../src/manifest/issues.ts';
import type { PrimitiveKind } from '../../src/manifest/kinds.ts';
import type { ResolvedManifest, ResolvedPrimitive } from '../../src/manifest/resolved.ts';
import { crossCheck } from '../../src/manifest/crosscheck.ts';
import { declaredOfKind, parseRef, resolveRef } from '../../src/manifest/refs.ts';

// ---------------------------------------------------------------------------------------------
// Factory: a valid L3-style manifest touching every rule; each test breaks one thing.
// File-based primitives live in `<kind>/<name>.yaml` with specPath ['spec']; tools are inline in
// claw.yaml (specPath ['spec', 'tools', i, 'inline']) so both origin shapes are exercised.

const ROOT = 'claw.yaml';

function prim(kind: PrimitiveKind, name: string, spec: Record<string, any>, version?: string): ResolvedPrimitive {
  const p: ResolvedPrimitive = {
    kind,
    name,
    labels: {},
    annotations: {},
    spec,
    origin: { file: `${kind.toLowerCase()}/${name}.yaml`, specPath: ['spec'] },
  };
  if (version !== undefined) p.version = version;
  return p;
}

function inlineTool(i: number, name: string, spec: Record<string, any>): ResolvedPrimitive {
  return { kind: 'Tool', name, labels: {}, annotations: {}, spec, origin: { file: ROOT, specPath: ['spec', 'tools', i, 'inline'] } };
}

function minimal(): ResolvedManifest {
  return {
    generation: '0.3',
    claw: '0.3.0',
    file: ROOT,
    name: 'minimal-bot',
    labels: {},
    annotations: {},
    identity: { ...prim('Identity', 'minimal-bot', { personality: 'p' }), origin: { file: ROOT, specPath: ['spec', 'identity', 'inline'] } },
    providers: [prim('Provider', 'local', { protocol: 'openai-compatible', endpoint: 'http://localhost:11434/v1', model: 'llama3', auth: { type: 'none' } })],
    channels: [],
    tools: [],
    skills: [],
    worldModels: [],
    policies: [],
  };
}

function full(): ResolvedManifest {
  const m = minimal();
  m.name = 'full-agent';
  m.identity.name = 'full-agent';
  m.providers = [
    prim('Provider', 'main', { protocol: 'anthropic-native', endpoint: 'https://a/v1', model: 'm', auth: { type: 'bearer', secret_ref: 'KEY' }, fallback: [{ provider_ref: 'backup' }] }),
    prim('Provider', 'backup', { protocol: 'openai-compatible', endpoint: 'http://l/v1', model: 'm', auth: { type: 'none' } }, '1.0.0'),
    prim('Provider', 'embed', { protocol: 'custom', endpoint: 'http://e/v1', model: 'e', auth: { type: 'api-key-header', secret_ref: 'E' } }),
  ];
  m.channels = [
    prim('Channel', 'cli', { type: 'cli', transport: 'stdio', auth: { secret_ref: 'T' } }),
    prim('Channel', 'team', { type: 'slack', transport: 'websocket', auth: { secret_ref: 'S' }, access_control: { mode: 'allowlist', allowed_ids: ['U1'] } }),
    prim('Channel', 'tick', { type: 'cron', transport: 'polling', auth: { secret_ref: 'C' }, trigger: { schedule: '0 * * * *' } }),
  ];
  m.tools = [
    inlineTool(0, 'search', { description: 'd', input_schema: { type: 'object' }, sandbox_ref: 'sbx', policy_ref: 'claw://policy/sec' }),
    inlineTool(1, 'sim', { mcp_source: { uri: 'stdio:///bin/sim', tool_name: 'simulate' } }),
    inlineTool(2, 'research-tool', { description: 'd', input_schema: { type: 'object' }, composite: true, skill_ref: 'deep-research' }),
  ];
  m.skills = [prim('Skill', 'deep-research', { description: 'd', tools_required: ['search', 'claw://local/tool/sim'], instruction: 'i', world_model_ref: 'env' })];
  m.memory = prim('Memory', 'mem', {
    stores: [
      { name: 'context', type: 'conversation', backend: 'sqlite' },
      { name: 'knowledge', type: 'semantic', backend: 'sqlite-vec', embedding: { provider_ref: 'embed', model: 'x', dimensions: 8 } },
    ],
  });
  m.worldModels = [
    prim('WorldModel', 'env', { paradigm: 'hybrid', memory_ref: 'mem', backend: { type: 'tool', ref: 'sim' }, constraints: { policy_ref: 'claw://local/policy/sec@1.0.0' } }),
    prim('WorldModel', 'llm-world', { paradigm: 'implicit', backend: { type: 'provider', ref: 'claw://provider/main' } }),
    prim('WorldModel', 'custom-world', { paradigm: 'explicit', backend: { type: 'custom', ref: 'whatever://x' } }),
  ];
  m.sandbox = prim('Sandbox', 'sbx', { level: 'process' });
  m.policies = [
    prim('Policy', 'sec', { rules: [{ id: 'deny-destructive', action: 'deny', scope: 'tool' }, { id: 'allow-all', action: 'allow', scope: 'all' }] }, '1.0.0'),
    prim('Policy', 'spend', { rules: [{ id: 'cap', action: 'audit-only', scope: 'all' }] }),
  ];
  m.swarm = prim('Swarm', 'team', {
    topology: 'leader-worker',
    agents: [
      { identity_ref: 'full-agent', role: 'leader', provider_ref: 'main' },
      { identity_ref: 'data-collector', role: 'worker', provider_ref: 'claw://provider/backup', count: 3 },
      { identity_ref: 'claw://registry/acme/fact-checker@1.0.0', role: 'worker' },
      { identity_ref: 'claw://identity/full-agent', role: 'worker' },
    ],
    coordination: { message_passing: 'direct', backend: 'in-process', concurrency: { max_parallel: 3 } },
    aggregation: { strategy: 'merge' },
  });
  m.telemetry = prim('Telemetry', 'obs', {
    exporters: [
      { type: 'otlp', endpoint: 'https://otel:4318/v1/traces' },
      { type: 'webhook', endpoint: 'https://hook' },
      { type: 'file', path: '/var/log/t.jsonl' },
      { type: 'sqlite', path: '/var/t.db' },
      { type: 'console' },
    ],
    sampling: { rate: 0.5 },
  });
  return m;
}

const byName = (list: ResolvedPrimitive[], name: string) => list.find((p) => p.name === name)!;

function run(mutate: (m: ResolvedManifest) => void, base: () => ResolvedManifest = full): RawIssue[] {
  const m = base();
  mutate(m);
  return crossCheck(m);
}

interface Expect {
  rule: string;
  section: string;
  file: string;
  segments: (string | number)[];
  message?: string; // substring
}

function one(issues: RawIssue[], e: Expect): void {
  assert.is(issues.length, 1, `expected exactly one issue, got ${JSON.stringify(issues, null, 1)}`);
  const [i] = issues;
  assert.is(i.rule, e.rule);
  assert.is(i.section, e.section);
  assert.is(i.file, e.file);
  assert.equal(i.segments, e.segments);
  if (e.message) assert.ok(i.message.includes(e.message), `message "${i.message}" should contain "${e.message}"`);
}

const none = (issues: RawIssue[]) => assert.equal(issues, []);

// ---------------------------------------------------------------------------------------------

test('valid manifests report nothing', () => {
  none(crossCheck(minimal()));
  none(crossCheck(full()));
});

// §5.2 Provider ----------------------------------------------------------------------------------

test('provider-secret-ref', () => {
  const at = { rule: 'provider-secret-ref', section: '§5.2', file: 'provider/main.yaml', segments: ['spec', 'auth', 'secret_ref'] };
  one(run((m) => (m.providers[0].spec.auth = { type: 'oauth2', secret_ref: '  ' })), { ...at, message: "auth.type is 'oauth2'" });
  // A missing secret_ref is the Provider schema's if/then, not a cross-check.
  none(run((m) => (m.providers[0].spec.auth = { type: 'bearer' })));
  none(run((m) => (m.providers[0].spec.auth = { type: 'none' })));
  none(run((m) => (m.providers[0].spec.auth = { type: 'none', secret_ref: 'X' })));
});

test('fallback provider_ref must resolve', () => {
  const at = { section: '§5.2', file: 'provider/main.yaml', segments: ['spec', 'fallback', 0, 'provider_ref'] };
  one(run((m) => (m.providers[0].spec.fallback = [{ provider_ref: 'nope' }])), {
    ...at,
    rule: 'ref-unresolved',
    message: "no Provider named 'nope' (declared: main, backup, embed)",
  });
  none(run((m) => (m.providers[0].spec.fallback = [{ provider_ref: 'claw://provider/backup' }, { provider_ref: 'claw://local/provider/embed' }])));
});

test('provider-fallback-self', () => {
  const at = { rule: 'provider-fallback-self', section: '§5.2', file: 'provider/main.yaml', segments: ['spec', 'fallback', 1, 'provider_ref'] };
  one(run((m) => m.providers[0].spec.fallback.push({ provider_ref: 'main' })), at);
  one(run((m) => m.providers[0].spec.fallback.push({ provider_ref: 'claw://local/provider/main' })), at);
  none(run(() => {}));
});

test('provider-fallback-cycle', () => {
  // main → backup → main: reported once, at the entry closing the loop.
  one(run((m) => (byName(m.providers, 'backup').spec.fallback = [{ provider_ref: 'main' }])), {
    rule: 'provider-fallback-cycle',
    section: '§5.2',
    file: 'provider/backup.yaml',
    segments: ['spec', 'fallback', 0, 'provider_ref'],
    message: 'main → backup → main',
  });
  // main → backup → embed → main
  one(
    run((m) => {
      byName(m.providers, 'backup').spec.fallback = [{ provider_ref: 'embed' }];
      byName(m.providers, 'embed').spec.fallback = [{ provider_ref: 'main' }];
    }),
    { rule: 'provider-fallback-cycle', section: '§5.2', file: 'provider/embed.yaml', segments: ['spec', 'fallback', 0, 'provider_ref'], message: 'main → backup → embed → main' },
  );
  // A diamond is not a cycle.
  none(
    run((m) => {
      m.providers[0].spec.fallback = [{ provider_ref: 'backup' }, { provider_ref: 'embed' }];
      byName(m.providers, 'embed').spec.fallback = [{ provider_ref: 'backup' }];
    }),
  );
});

// Ref failure modes (shown on fallback; the same code path serves every ref field) ---------------

test('ref failure modes', () => {
  const at = (ref: string) => run((m) => (m.providers[0].spec.fallback = [{ provider_ref: ref }]));
  const segs = ['spec', 'fallback', 0, 'provider_ref'];
  const file = 'provider/main.yaml';
  one(at('claw://local/tool/backup'), { rule: 'ref-wrong-kind', section: '§5.2', file, segments: segs, message: 'names a tool, expected a Provider' });
  one(at('claw://registry/acme/backup@1.0.0'), { rule: 'ref-not-local', section: '§5.2', file, segments: segs, message: 'registry URI' });
  one(at('claw://provider/bad_name'), { rule: 'ref-invalid-uri', section: '§7', file, segments: segs, message: "invalid character '_'" });
  one(at('claw://local/provider/backup@2.0.0'), { rule: 'ref-version-mismatch', section: '§5.2', file, segments: segs, message: 'asks for version 2.0.0' });
  one(at('bad name'), { rule: 'ref-invalid-name', section: '§5.2', file, segments: segs });
  one(at('backup@1.0.0'), { rule: 'ref-invalid-name', section: '§5.2', file, segments: segs, message: 'use claw://local/provider/backup@1.0.0' });
  none(at('claw://local/provider/backup@1.0.0')); // version matches
  none(at('claw://local/provider/embed@9.9.9')); // embed has no metadata.version: nothing to compare
});

test('resolveRef / parseRef / declaredOfKind', () => {
  const m = full();
  const r = resolveRef(m, 'Policy', 'claw://POLICY/sec');
  assert.ok(r.ok && r.primitive.name === 'sec' && r.uri?.canonical === 'claw://local/policy/sec');
  const u = resolveRef(m, 'Memory', 'other');
  assert.ok(!u.ok && u.failure === 'unresolved' && u.reason.includes('declared: mem'));
  const e = resolveRef(minimal(), 'Sandbox', 'sbx');
  assert.ok(!e.ok && e.reason.includes('no Sandbox is declared'));
  const p = parseRef('claw://world-model/env', 'WorldModel');
  assert.ok(p.ok && p.alias && p.name === 'env');
  assert.is(declaredOfKind(m, 'Identity').length, 1);
  assert.is(declaredOfKind(minimal(), 'Swarm').length, 0);
});

// §5.3 Channel -----------------------------------------------------------------------------------

test('channel-access-control-field: TV-L3-04 allowlist + roles', () => {
  one(
    run((m) => (byName(m.channels, 'team').spec.access_control = { mode: 'allowlist', allowed_ids: ['U01ABC'], roles: [{ id: 'U01ABC', role: 'admin' }] })),
    { rule: 'channel-access-control-field', section: '§5.3', file: 'channel/team.yaml', segments: ['spec', 'access_control', 'roles'], message: "'allowlist' mode uses allowed_ids" },
  );
});

test('channel-access-control-field: TV-L3-05 role-based + allowed_ids', () => {
  one(
    run((m) => (byName(m.channels, 'team').spec.access_control = { mode: 'role-based', roles: [{ id: '12345', role: 'user' }], allowed_ids: ['12345'] })),
    { rule: 'channel-access-control-field', section: '§5.3', file: 'channel/team.yaml', segments: ['spec', 'access_control', 'allowed_ids'] },
  );
});

test('channel-access-control-field: open and pairing modes', () => {
  const issues = run((m) => (byName(m.channels, 'team').spec.access_control = { mode: 'open', allowed_ids: ['a'], pairing: { code_expiry_minutes: 1, max_pending: 1 } }));
  assert.equal(issues.map((i) => [i.rule, i.segments.at(-1)]), [
    ['channel-access-control-field', 'allowed_ids'],
    ['channel-access-control-field', 'pairing'],
  ]);
  one(run((m) => (byName(m.channels, 'team').spec.access_control = { mode: 'pairing', pairing: { code_expiry_minutes: 1, max_pending: 1 }, roles: [] })), {
    rule: 'channel-access-control-field',
    section: '§5.3',
    file: 'channel/team.yaml',
    segments: ['spec', 'access_control', 'roles'],
  });
  none(run((m) => (byName(m.channels, 'team').spec.access_control = { mode: 'role-based', roles: [{ id: 'u', role: 'viewer' }] })));
  none(run((m) => (byName(m.channels, 'team').spec.access_control = { mode: 'open' })));
});

test('channel-trigger-field', () => {
  one(run((m) => delete byName(m.channels, 'tick').spec.trigger), {
    rule: 'channel-trigger-field',
    section: '§5.3',
    file: 'channel/tick.yaml',
    segments: ['spec', 'trigger', 'schedule'],
    message: "type 'cron' requires trigger.schedule",
  });
  const cases: [string, string][] = [['queue', 'queue_name'], ['imap', 'mailbox'], ['db-trigger', 'table']];
  for (const [type, field] of cases) {
    one(run((m) => (byName(m.channels, 'tick').spec = { type, transport: 'polling', auth: { secret_ref: 'x' }, trigger: { max_parallel: 2 } })), {
      rule: 'channel-trigger-field',
      section: '§5.3',
      file: 'channel/tick.yaml',
      segments: ['spec', 'trigger', field],
    });
    none(run((m) => (byName(m.channels, 'tick').spec = { type, transport: 'polling', auth: { secret_ref: 'x' }, trigger: { [field]: 'v' } })));
  }
});

// §5.4 Tool --------------------------------------------------------------------------------------

test('tool sandbox_ref and policy_ref resolve', () => {
  one(run((m) => (m.tools[0].spec.sandbox_ref = 'net-sandbox')), {
    rule: 'ref-unresolved',
    section: '§5.4',
    file: ROOT,
    segments: ['spec', 'tools', 0, 'inline', 'sandbox_ref'],
    message: "no Sandbox named 'net-sandbox' (declared: sbx)",
  });
  one(run((m) => delete m.sandbox), { rule: 'ref-unresolved', section: '§5.4', file: ROOT, segments: ['spec', 'tools', 0, 'inline', 'sandbox_ref'], message: 'no Sandbox is declared' });
  one(run((m) => (m.tools[0].spec.policy_ref = 'claw://sandbox/sbx')), {
    rule: 'ref-wrong-kind',
    section: '§5.4',
    file: ROOT,
    segments: ['spec', 'tools', 0, 'inline', 'policy_ref'],
  });
  none(run((m) => (m.tools[0].spec.policy_ref = 'spend')));
});

test('tool-composite-skill-ref', () => {
  one(run((m) => delete m.tools[2].spec.skill_ref), { rule: 'tool-composite-skill-ref', section: '§5.4', file: ROOT, segments: ['spec', 'tools', 2, 'inline', 'skill_ref'] });
  none(run((m) => (m.tools[2].spec = { description: 'd', input_schema: {}, composite: false })));
  one(run((m) => (m.tools[2].spec.skill_ref = 'shallow-research')), {
    rule: 'ref-unresolved',
    section: '§5.4',
    file: ROOT,
    segments: ['spec', 'tools', 2, 'inline', 'skill_ref'],
    message: "no Skill named 'shallow-research' (declared: deep-research)",
  });
});

test('tool-mcp-uri-reserved', () => {
  one(run((m) => (m.tools[1].spec.mcp_source.uri = 'mcp://github')), {
    rule: 'tool-mcp-uri-reserved',
    section: '§5.4',
    file: ROOT,
    segments: ['spec', 'tools', 1, 'inline', 'mcp_source', 'uri'],
  });
  none(run((m) => (m.tools[1].spec.mcp_source.uri = 'https://mcp.example.com/sim')));
});

test('tool-composite-cycle', () => {
  one(run((m) => m.skills[0].spec.tools_required.push('research-tool')), {
    rule: 'tool-composite-cycle',
    section: '§5.4',
    file: ROOT,
    segments: ['spec', 'tools', 2, 'inline', 'skill_ref'],
    message: "research-tool → skill 'deep-research' → research-tool",
  });
  none(run(() => {}));
});

// §5.5 Skill -------------------------------------------------------------------------------------

test('skill tools_required resolve to declared tools', () => {
  one(run((m) => m.skills[0].spec.tools_required.push('web-fetch')), {
    rule: 'ref-unresolved',
    section: '§5.5',
    file: 'skill/deep-research.yaml',
    segments: ['spec', 'tools_required', 2],
    message: "no Tool named 'web-fetch' (declared: search, sim, research-tool)",
  });
  one(run((m) => m.skills[0].spec.tools_required.push('claw://registry/std/shell@1.0.0')), {
    rule: 'ref-not-local',
    section: '§5.5',
    file: 'skill/deep-research.yaml',
    segments: ['spec', 'tools_required', 2],
  });
  none(run(() => {}));
});

test('skill tools_required: a whole-server MCP bridge may provide unknown plain names', () => {
  const bridge = (m: ResolvedManifest) => m.tools.push(inlineTool(3, 'mcp-github', { mcp_source: { uri: 'stdio:///bin/gh' } }));
  // Without a bridge, an MCP-style name is just not a primitive name.
  one(run((m) => m.skills[0].spec.tools_required.push('create_issue')), {
    rule: 'ref-invalid-name',
    section: '§5.5',
    file: 'skill/deep-research.yaml',
    segments: ['spec', 'tools_required', 2],
  });
  none(run((m) => (bridge(m), m.skills[0].spec.tools_required.push('create_issue'))));
  // ...but an explicit local URI still has to name a declared Tool.
  one(run((m) => (bridge(m), m.skills[0].spec.tools_required.push('claw://tool/create-issue'))), {
    rule: 'ref-unresolved',
    section: '§5.5',
    file: 'skill/deep-research.yaml',
    segments: ['spec', 'tools_required', 2],
  });
});

test('skill world_model_ref resolves to a declared WorldModel', () => {
  one(run((m) => (m.skills[0].spec.world_model_ref = 'planner')), {
    rule: 'ref-unresolved',
    section: '§5.5',
    file: 'skill/deep-research.yaml',
    segments: ['spec', 'world_model_ref'],
    message: "no WorldModel named 'planner' (declared: env, llm-world, custom-world)",
  });
  none(run((m) => (m.skills[0].spec.world_model_ref = 'claw://world-model/llm-world')));
});

// §5.6 Memory ------------------------------------------------------------------------------------

test('memory-store-name-duplicate', () => {
  one(run((m) => (m.memory!.spec.stores[1].name = 'context')), {
    rule: 'memory-store-name-duplicate',
    section: '§5.6',
    file: 'memory/mem.yaml',
    segments: ['spec', 'stores', 1, 'name'],
    message: 'already used by stores[0]',
  });
  none(run(() => {}));
});

test('memory embedding.provider_ref resolves to a provider', () => {
  one(run((m) => (m.memory!.spec.stores[1].embedding.provider_ref = 'openai-embed')), {
    rule: 'ref-unresolved',
    section: '§5.6',
    file: 'memory/mem.yaml',
    segments: ['spec', 'stores', 1, 'embedding', 'provider_ref'],
  });
  none(run((m) => (m.memory!.spec.stores[1].embedding.provider_ref = 'claw://provider/main')));
});

// §5.7 WorldModel --------------------------------------------------------------------------------

test('world model memory_ref, constraints.policy_ref and backend.ref resolve', () => {
  const file = 'worldmodel/env.yaml';
  one(run((m) => (m.worldModels[0].spec.memory_ref = 'other-memory')), { rule: 'ref-unresolved', section: '§5.7', file, segments: ['spec', 'memory_ref'], message: 'declared: mem' });
  one(run((m) => delete m.memory), { rule: 'ref-unresolved', section: '§5.7', file, segments: ['spec', 'memory_ref'], message: 'no Memory is declared' });
  one(run((m) => (m.worldModels[0].spec.constraints.policy_ref = 'claw://local/policy/sec@2.0.0')), {
    rule: 'ref-version-mismatch',
    section: '§5.7',
    file,
    segments: ['spec', 'constraints', 'policy_ref'],
  });
  // backend.type decides the kind: 'main' is a provider, not a tool.
  one(run((m) => (m.worldModels[0].spec.backend.ref = 'main')), { rule: 'ref-unresolved', section: '§5.7', file, segments: ['spec', 'backend', 'ref'], message: "no Tool named 'main'" });
  one(run((m) => (m.worldModels[1].spec.backend.ref = 'sim')), {
    rule: 'ref-unresolved',
    section: '§5.7',
    file: 'worldmodel/llm-world.yaml',
    segments: ['spec', 'backend', 'ref'],
    message: "no Provider named 'sim'",
  });
  none(run((m) => (m.worldModels[2].spec.backend.ref = 'anything at all')));
});

// §5.9 Policy ------------------------------------------------------------------------------------

test('policy-rule-id-duplicate', () => {
  one(run((m) => (m.policies[1].spec.rules[0].id = 'allow-all')), {
    rule: 'policy-rule-id-duplicate',
    section: '§5.9',
    file: 'policy/spend.yaml',
    segments: ['spec', 'rules', 0, 'id'],
    message: "already used by rules[1] of Policy 'sec'",
  });
  one(run((m) => m.policies[0].spec.rules.push({ id: 'deny-destructive', action: 'deny', scope: 'all' })), {
    rule: 'policy-rule-id-duplicate',
    section: '§5.9',
    file: 'policy/sec.yaml',
    segments: ['spec', 'rules', 2, 'id'],
    message: 'already used by rules[0];',
  });
  none(run(() => {}));
});

// §5.10 Swarm ------------------------------------------------------------------------------------

test('swarm agents provider_ref resolves', () => {
  one(run((m) => (m.swarm!.spec.agents[1].provider_ref = 'fast-llm')), {
    rule: 'ref-unresolved',
    section: '§5.10',
    file: 'swarm/team.yaml',
    segments: ['spec', 'agents', 1, 'provider_ref'],
  });
  none(run(() => {}));
});

test('swarm agents identity_ref: peers allowed, form checked', () => {
  const seg = ['spec', 'agents', 0, 'identity_ref'];
  const file = 'swarm/team.yaml';
  one(run((m) => (m.swarm!.spec.agents[0].identity_ref = 'claw://local/tool/x')), { rule: 'ref-wrong-kind', section: '§5.10', file, segments: seg });
  one(run((m) => (m.swarm!.spec.agents[0].identity_ref = 'claw://identity/lead_analyst')), { rule: 'ref-invalid-uri', section: '§7', file, segments: seg });
  one(run((m) => (m.swarm!.spec.agents[0].identity_ref = 'lead analyst')), { rule: 'ref-invalid-name', section: '§5.10', file, segments: seg });
  none(run((m) => (m.swarm!.spec.agents[0].identity_ref = 'some-peer-not-in-this-manifest')));
});

// §5.11 Telemetry --------------------------------------------------------------------------------

test('telemetry-exporter-endpoint', () => {
  const file = 'telemetry/obs.yaml';
  one(run((m) => delete m.telemetry!.spec.exporters[0].endpoint), {
    rule: 'telemetry-exporter-endpoint',
    section: '§5.11',
    file,
    segments: ['spec', 'exporters', 0, 'endpoint'],
    message: "exporter type 'otlp' requires endpoint",
  });
  one(run((m) => (m.telemetry!.spec.exporters[1].endpoint = '')), { rule: 'telemetry-exporter-endpoint', section: '§5.11', file, segments: ['spec', 'exporters', 1, 'endpoint'] });
  none(run(() => {}));
});

test('telemetry-exporter-path', () => {
  const file = 'telemetry/obs.yaml';
  one(run((m) => delete m.telemetry!.spec.exporters[2].path), { rule: 'telemetry-exporter-path', section: '§5.11', file, segments: ['spec', 'exporters', 2, 'path'] });
  one(run((m) => delete m.telemetry!.spec.exporters[3].path), { rule: 'telemetry-exporter-path', section: '§5.11', file, segments: ['spec', 'exporters', 3, 'path'] });
  none(run((m) => (m.telemetry!.spec.exporters = [{ type: 'console' }])));
});

// All together ---------------------------------------------------------------------------------

test('reports every issue, in check order, without stopping at the first', () => {
  const issues = run((m) => {
    m.providers[0].spec.auth = { type: 'bearer', secret_ref: ' ' };
    m.providers[0].spec.fallback = [{ provider_ref: 'nope' }];
    byName(m.channels, 'team').spec.access_control.roles = [];
    m.tools[0].spec.sandbox_ref = 'x';
    m.skills[0].spec.world_model_ref = 'x';
    m.memory!.spec.stores[1].name = 'context';
    m.worldModels[0].spec.memory_ref = 'x';
    m.policies[1].spec.rules[0].id = 'allow-all';
    m.swarm!.spec.agents[0].provider_ref = 'x';
  });
  assert.equal(
    issues.map((i) => `${i.rule} ${i.file}`),
    [
      'provider-secret-ref provider/main.yaml',
      'ref-unresolved provider/main.yaml',
      'channel-access-control-field channel/team.yaml',
      'ref-unresolved claw.yaml',
      'ref-unresolved skill/deep-research.yaml',
      'memory-store-name-duplicate memory/mem.yaml',
      'ref-unresolved worldmodel/env.yaml',
      'policy-rule-id-duplicate policy/spend.yaml',
      'ref-unresolved swarm/team.yaml',
    ],
  );
});

test('malformed shapes are left to the schema, never crash', () => {
  const m = full();
  for (const p of [m.identity, ...m.providers, ...m.channels, ...m.tools, ...m.skills, ...m.worldModels, ...m.policies]) p.spec = null as any;
  m.memory!.spec = { stores: 'x' };
  m.swarm!.spec = { agents: [null, 3, { identity_ref: 5, provider_ref: {} }] };
  m.telemetry!.spec = { exporters: [null, { type: 7 }], sampling: { rate: '2' } };
  none(crossCheck(m));
});

test.run();
