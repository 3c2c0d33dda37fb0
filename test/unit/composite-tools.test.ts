// Composite tools (src/agent/composite.ts, docs/agent.md "Composite tools"; spec §5.4 composite/skill_ref,
// §5.5 Skill): the real tools module binds a `composite: true` tool and runs its skill as a sub-turn, with
// a scripted provider and exec tools whose process runner records what actually ran.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toolsModule, type ToolsModule } from '../../src/runtime/tools-module.ts';
import { compositeBinder } from '../../src/agent/composite.ts';
import { Redactor } from '../../src/log/redactor.ts';
import { NO_TELEMETRY, type ProviderRequest, type ProviderResponse } from '../../src/kernel/ports.ts';
import type { RuntimeConfig } from '../../src/config/runtime-config.ts';
import type { ResolvedManifest } from '../../src/manifest/resolved.ts';
import { FakeClock, captureLogger, makeManifest, primitive, until } from './helpers/fakes.ts';
import { MemLedgerStore, fakeFetch, fakeRunner, runOutcome } from './helpers/gate-fakes.ts';

const ANY = { type: 'object' };
const TOPIC = { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] };
const call = (tool: string, args: Record<string, unknown>) => JSON.stringify({ tool_call: { tool, args } });
const msg = (content: string) => JSON.stringify({ message: { content } });

interface Harness {
  mod: ToolsModule;
  ran: string[];
  /** What the process runner was asked to run (live): the sandbox each exec tool ran under. */
  runs: { sandbox: any }[];
  requests: ProviderRequest[];
  clock: FakeClock;
  /** Notifications the module sent (approval requests). */
  notes: any[];
  /** claw.tool.call as an operator sends it. */
  invoke(name: string, args: Record<string, unknown>): Promise<any>;
}

async function harness(o: {
  tools: Record<string, unknown>[];
  skills: Record<string, unknown>[];
  rules?: Record<string, unknown>[];
  script: string[];
  maxDepth?: number;
  config?: RuntimeConfig;
}): Promise<Harness> {
  const ran: string[] = [];
  const runner = fakeRunner((req) => {
    ran.push(`${req.bin} ${req.stdin}`);
    return runOutcome({ stdout: `${req.bin} says ok` });
  });
  const m: ResolvedManifest = makeManifest(2, {
    tools: o.tools.map((t) => primitive('Tool', String(t.name), t)),
    skills: o.skills.map((s) => primitive('Skill', String(s.name), s)),
    identity: primitive('Identity', 'test-identity', { autonomy: 'autonomous' }),
    sandbox: primitive('Sandbox', 'sb', { level: 'none' }),
    policies: [primitive('Policy', 'pol', { rules: o.rules ?? [{ id: 'rest', action: 'allow', scope: 'all' }] })],
  });
  // Tools `safe` and `danger` are exec tools: what the runner saw is what really ran.
  const config = { tools: { safe: { exec: { bin: 'safe' } }, danger: { exec: { bin: 'danger' } } }, ...o.config } as RuntimeConfig;
  const requests: ProviderRequest[] = [];
  const script = [...o.script];
  const provider = {
    async complete(req: ProviderRequest): Promise<ProviderResponse> {
      requests.push(req);
      const text = script.shift();
      // HANG: a model that does not answer until the request is aborted.
      if (text === 'HANG') return new Promise((_, reject) => req.signal!.addEventListener('abort', () => reject(req.signal!.reason), { once: true }));
      if (text === undefined) throw new Error('no scripted output left');
      return { text, toolCallCount: 0, provider: 'p1', model: 'm' };
    },
  };
  let n = 0;
  const clock = new FakeClock();
  const notes: any[] = [];
  const mod = toolsModule({
    config,
    clock,
    log: captureLogger(),
    redactor: new Redactor(),
    notify: (x) => notes.push(x),
    ledgerStore: new MemLedgerStore(),
    environment: async () => ({
      registry: { run: runner, resolveSecrets: async () => ({}), builtins: { run: runner, fetch: fakeFetch(), cwdFor: () => '/tmp' } },
      isolationProblem: () => undefined,
      isolationNotes: () => [],
      host: {} as any,
    }),
    composites: (man) =>
      compositeBinder(man, { config, workspaceDir: '/tmp/claw-composite-ws', redact: (s) => s, now: () => 0, newId: () => `sub-${++n}`, provider: () => provider, maxDepth: o.maxDepth }),
  });
  const session = { manifest: m, protocolVersion: '0.3.0', level: 2 as const, capabilities: {}, abort: new AbortController() };
  await mod.start!(session, { telemetry: NO_TELEMETRY } as any);
  let id = 0;
  return {
    mod,
    ran,
    clock,
    notes,
    runs: runner.requests,
    requests,
    invoke: async (name, args) => {
      try {
        return await mod.methods!['claw.tool.call']!.handler({ name, arguments: args, context: { request_id: `op-${++id}`, identity: m.identity.name } }, {} as any, {} as any);
      } catch (e) {
        return { error: (e as any).toJSON ? (e as any).toJSON() : String(e) };
      }
    },
  };
}

const SAFE = { name: 'safe', description: 'a safe tool', input_schema: ANY };
const DANGER = { name: 'danger', description: 'a dangerous tool', input_schema: ANY };
const research = (over: Record<string, unknown> = {}) => ({ name: 'research', description: 'researches a topic', input_schema: ANY, composite: true, skill_ref: 'researcher', ...over });
const researcher = (tools: string[], over: Record<string, unknown> = {}) => ({ name: 'researcher', description: 'finds things', instruction: 'INSTRUCTION-R: use the tools', tools_required: tools, ...over });

test('a composite runs its skill as a sub-turn: one sub-tool call, then the final message is its result', async () => {
  const h = await harness({ tools: [SAFE, DANGER, research()], skills: [researcher(['safe'])], script: [call('safe', { q: 'cats' }), msg('RESULT-1 cats found')] });
  const r = await h.invoke('research', { topic: 'cats' });
  assert.equal(r, { content: [{ type: 'text', text: 'RESULT-1 cats found' }] });
  assert.equal(h.ran, ['safe {"q":"cats"}']);
  assert.is(h.requests.length, 2);
  const first = h.requests[0]!;
  const system = first.messages[0]!.content;
  // ONLY the skill's tools_required: not the other tool, not the composite itself.
  assert.ok(system.includes('## researcher: finds things\nINSTRUCTION-R: use the tools'), system);
  assert.ok(system.includes('- safe: a safe tool'));
  assert.not.ok(system.includes('- danger'));
  assert.not.ok(system.includes('- research'));
  assert.equal(first.tools!.map((t) => t.name), ['safe']);
  assert.equal(first.messages.slice(1), [
    {
      role: 'user',
      content: 'Run the skill "researcher" for the tool "research" with these arguments: {"topic":"cats"}\nWhen done, answer with the message form; its content is the tool\'s result.',
    },
  ]);
  // The sub-tool's result went back to the model in the sub-turn.
  assert.equal(h.requests[1]!.messages.slice(-1), [{ role: 'tool', content: '{"tool_result":{"tool":"safe","ok":true,"content":"safe says ok"}}' }]);
  // The agent loop sees the composite as one tool among the others.
  assert.equal(h.mod.agentTools()!.list().map((t) => t.name), ['safe', 'danger', 'research']);
  await h.mod.stop!({} as any);
});

test("the skill's input_schema is checked too: -32602 with paths, and nothing runs", async () => {
  const h = await harness({ tools: [SAFE, research()], skills: [researcher(['safe'], { input_schema: TOPIC })], script: [msg('never')] });
  const r = await h.invoke('research', { topic: 5 });
  assert.is(r.error.code, -32602);
  assert.is(r.error.message, "Invalid params: arguments do not match research's input_schema");
  assert.equal(
    r.error.data.issues.map((i: any) => [i.path, i.keyword]),
    // The validator also reports the failing `properties` keyword at the object itself (src/tools/json-schema.ts).
    [
      ['/', 'properties'],
      ['/topic', 'type'],
    ],
  );
  assert.ok(r.error.data.issues[1].message.startsWith('skill researcher: '), r.error.data.issues[1].message);
  const missing = await h.invoke('research', {});
  assert.equal(
    missing.error.data.issues.map((i: any) => [i.path, i.keyword]),
    [['/', 'required']],
  );
  assert.is(h.requests.length, 0);
  assert.equal(h.ran, []);
  // The agent loop's validator uses the same combined check.
  const check = h.mod.agentTools()!.list().find((t) => t.name === 'research')!.check;
  assert.is(check({ topic: 'x' }).length, 0);
  assert.is(check({ topic: 1 }).length, 2);
  await h.mod.stop!({} as any);
});

test('the tool\'s own input_schema is still checked first', async () => {
  const own = { type: 'object', properties: { topic: { type: 'string', maxLength: 3 } } };
  const h = await harness({ tools: [SAFE, research({ input_schema: own })], skills: [researcher(['safe'], { input_schema: TOPIC })], script: [] });
  const r = await h.invoke('research', { topic: 'long topic' });
  assert.equal(
    r.error.data.issues.map((i: any) => [i.path, i.keyword, i.message.startsWith('skill ')]),
    [
      ['/', 'properties', false],
      ['/topic', 'maxLength', false],
    ],
  );
  await h.mod.stop!({} as any);
});

test('sub-calls are gated with the skill attributed: a policy `skill` deny ends the composite with an error result, the tool never ran', async () => {
  const rules = [
    { id: 'no-danger-in-research', action: 'deny', scope: 'all', conditions: { skill: 'researcher', tool: 'danger' }, reason: 'not while researching' },
    { id: 'rest', action: 'allow', scope: 'all' },
  ];
  const h = await harness({ tools: [SAFE, DANGER, research()], skills: [researcher(['safe', 'danger'])], rules, script: [call('danger', { x: 1 }), msg('must not be asked')] });
  const r = await h.invoke('research', { topic: 'cats' });
  assert.is(r.isError, true);
  assert.is(r.content.length, 1);
  assert.ok(r.content[0].text.startsWith('composite tool research: sub-tool danger was refused (-32011): '), r.content[0].text);
  assert.ok(r.content[0].text.includes('not while researching'), r.content[0].text);
  assert.equal(h.ran, []);
  // The model was not asked again after the refusal.
  assert.is(h.requests.length, 1);
  // The same tool called by the operator has no skill: the `skill` condition does not hold, so it runs.
  const direct = await h.invoke('danger', { x: 2 });
  assert.equal(direct, { content: [{ type: 'text', text: 'danger says ok' }] });
  assert.equal(h.ran, ['danger {"x":2}']);
  await h.mod.stop!({} as any);
});

test("the skill's permissions narrow its sub-calls: network: false reaches the sub-tool's sandbox", async () => {
  const h = await harness({ tools: [SAFE, research()], skills: [researcher(['safe'], { permissions: { network: false } })], script: [call('safe', {}), msg('done')] });
  const r = await h.invoke('research', { topic: 'x' });
  assert.equal(r, { content: [{ type: 'text', text: 'done' }] });
  assert.is(h.runs.length, 1);
  assert.is(h.runs[0]!.sandbox.capabilities.network.mode, 'deny');
  assert.is(h.runs[0]!.sandbox.level, 'none');
  await h.mod.stop!({} as any);
  // The same sub-call without the permission keeps the tool's network.
  const open = await harness({ tools: [SAFE, research()], skills: [researcher(['safe'])], script: [call('safe', {}), msg('done')] });
  await open.invoke('research', { topic: 'x' });
  assert.is(open.runs.length, 1);
  assert.is(open.runs[0]!.sandbox.capabilities.network.mode, 'allow-all');
  await open.mod.stop!({} as any);
});

test('a sub-turn that gives up or hits its step limit is an error result saying so', async () => {
  const gaveUp = await harness({ tools: [SAFE, research()], skills: [researcher(['safe'])], script: ['not json', 'still not', 'nope'] });
  const r = await gaveUp.invoke('research', { topic: 'x' });
  assert.equal(r, { content: [{ type: 'text', text: 'composite tool research: skill researcher did not finish: the model gave no valid answer after 3 rejected outputs' }], isError: true });
  await gaveUp.mod.stop!({} as any);

  const steps = await harness({
    tools: [SAFE, research()],
    skills: [researcher(['safe'])],
    config: { agent: { max_tool_steps: 2 } } as RuntimeConfig,
    script: [call('safe', { n: 1 }), call('safe', { n: 2 }), call('safe', { n: 3 })],
  });
  const s = await steps.invoke('research', { topic: 'x' });
  assert.equal(s, { content: [{ type: 'text', text: 'composite tool research: skill researcher did not finish: it reached the limit of 2 tool calls without a final answer' }], isError: true });
  assert.equal(steps.ran, ['safe {"n":1}', 'safe {"n":2}']);
  await steps.mod.stop!({} as any);
});

test("the skill's approval_required asks for each sub-call; an operator's deny ends the composite, nothing ran", async () => {
  const h = await harness({ tools: [SAFE, research()], skills: [researcher(['safe'], { permissions: { approval_required: true } })], script: [call('safe', { q: 1 }), msg('never')] });
  const pending = h.invoke('research', { topic: 'x' });
  await until(() => h.notes.length === 1);
  const asked = h.notes[0];
  assert.is(asked.method, 'claw.tool.approval_requested');
  assert.equal([asked.params.tool, asked.params.rule_id, asked.params.arguments], ['safe', 'skill-researcher-approval-required', { q: 1 }]);
  assert.equal(await h.mod.methods!['claw.tool.deny']!.handler({ request_id: asked.params.request_id, reason: 'no' }, {} as any, {} as any), { acknowledged: true });
  const r = await pending;
  assert.is(r.isError, true);
  assert.ok(r.content[0].text.startsWith('composite tool research: sub-tool safe was refused (-32013): '), r.content[0].text);
  assert.equal(h.ran, []);
  assert.is(h.requests.length, 1);
  await h.mod.stop!({} as any);
});

test("the composite's timeout_ms bounds the whole sub-turn: -32014, nothing ran", async () => {
  const h = await harness({ tools: [SAFE, research({ timeout_ms: 5000 })], skills: [researcher(['safe'])], script: ['HANG'] });
  const pending = h.invoke('research', { topic: 'x' });
  await until(() => h.requests.length === 1);
  h.clock.advance(5000);
  const r = await pending;
  assert.is(r.error.code, -32014);
  assert.is(r.error.message, 'Tool execution timeout: research exceeded 5000 ms');
  assert.equal(h.ran, []);
  await h.mod.stop!({} as any);
});

test('recursion is bounded: a composite nested deeper than the limit is not run', async () => {
  // outer → skill wrapper (tools: inner) → inner → skill researcher (tools: safe).
  const tools = [SAFE, research({ name: 'inner' }), research({ name: 'outer', skill_ref: 'wrapper' })];
  const skills = [researcher(['safe']), { name: 'wrapper', description: 'wraps', instruction: 'call inner', tools_required: ['inner'] }];
  const script = [call('inner', { topic: 'y' }), msg('OUTER-DONE')];

  const limited = await harness({ tools, skills, script, maxDepth: 1 });
  const r = await limited.invoke('outer', { topic: 'y' });
  assert.equal(r, { content: [{ type: 'text', text: 'OUTER-DONE' }] });
  assert.equal(limited.ran, []);
  assert.equal(limited.requests.length, 2);
  assert.equal(limited.requests[1]!.messages.slice(-1), [
    { role: 'tool', content: '{"tool_result":{"tool":"inner","ok":false,"content":"composite tool inner was not run: composite tools nest at most 1 deep (skill researcher)"}}' },
  ]);
  await limited.mod.stop!({} as any);

  // With room for two levels the inner composite runs its own sub-turn (the script is shared, in order).
  const two = await harness({ tools, skills, script: [call('inner', { topic: 'y' }), call('safe', { q: 'y' }), msg('INNER-DONE'), msg('OUTER-DONE')], maxDepth: 2 });
  const t = await two.invoke('outer', { topic: 'y' });
  assert.equal(t, { content: [{ type: 'text', text: 'OUTER-DONE' }] });
  assert.equal(two.ran, ['safe {"q":"y"}']);
  assert.equal(two.requests[3]!.messages.slice(-1), [{ role: 'tool', content: '{"tool_result":{"tool":"inner","ok":true,"content":"INNER-DONE"}}' }]);
  // A composite called directly is level 1 again once the nested call is over.
  await two.mod.stop!({} as any);
});

test('without a composite binder a composite tool is refused at STARTING, by name', async () => {
  const m = makeManifest(2, { tools: [primitive('Tool', 'research', research())], skills: [primitive('Skill', 'researcher', researcher([]))], sandbox: primitive('Sandbox', 'sb', { level: 'none' }) });
  const mod = toolsModule({
    config: {} as RuntimeConfig,
    clock: new FakeClock(),
    log: captureLogger(),
    redactor: new Redactor(),
    notify: () => {},
    ledgerStore: new MemLedgerStore(),
    environment: async () => ({ registry: { run: fakeRunner(), resolveSecrets: async () => ({}), builtins: {} as any }, isolationProblem: () => undefined, isolationNotes: () => [], host: {} as any }),
  });
  try {
    await mod.start!({ manifest: m, protocolVersion: '0.3.0', level: 2, capabilities: {}, abort: new AbortController() }, { telemetry: NO_TELEMETRY } as any);
    assert.unreachable('started');
  } catch (e) {
    assert.is((e as Error).message, 'Invalid params: tool research: composite tools are not available in this runtime');
  }
});

test.run();
