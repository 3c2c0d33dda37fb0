// Level 3 per capability group (docs/protocol.md, the integrator's decision): a level-3 method is
// answered when the runtime implements its whole group and the manifest is level 3 by its primitives; the
// initialize reply keeps conformanceLevel = min(manifest, runtime) and lists exactly the implemented groups.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent, type KernelModule } from '../../src/kernel/agent.ts';
import { Router } from '../../src/kernel/router.ts';
import type { MethodSpec } from '../../src/kernel/methods/index.ts';
import { FakeClock, captureLogger, makeManifest, textFrame, until } from './helpers/fakes.ts';

const group = (name: string, level: 2 | 3, methods: string[]): KernelModule => ({
  name,
  methods: Object.fromEntries(methods.map((m): [string, MethodSpec] => [m, { level, states: ['READY'], handler: () => ({ answered: m }) }])),
});
const TOOLS = ['claw.tool.call', 'claw.tool.approve', 'claw.tool.deny'];
const MEMORY = ['claw.memory.query', 'claw.memory.store', 'claw.memory.compact'];
// claw.swarm.result is this runtime's extension of the swarm group (docs/swarm.md).
const SWARM = ['claw.swarm.delegate', 'claw.swarm.report', 'claw.swarm.broadcast', 'claw.swarm.discover', 'claw.swarm.result'];

async function session(level: 1 | 2 | 3, modules: KernelModule[], capabilities: Record<string, unknown> = {}) {
  const agent = new Agent({
    clock: new FakeClock(),
    log: captureLogger(),
    config: {},
    notify: () => {},
    loadWireManifest: async () => ({ manifest: makeManifest(level), issues: [] }),
    modules,
  });
  const router = new Router({ dispatch: agent.dispatch, inflight: agent.inflight, log: captureLogger() });
  const replies: any[] = [];
  let id = 0;
  const call = async (method: string, params: unknown = {}) => {
    const n = ++id;
    router.handle(textFrame(JSON.stringify({ jsonrpc: '2.0', id: n, method, params }), replies), 'test');
    await until(() => replies.some((r) => r.id === n), 3000);
    return replies.find((r) => r.id === n);
  };
  const init = await call('claw.initialize', { protocolVersion: '0.3.0', clientInfo: { name: 't', version: '1' }, manifest: {}, capabilities });
  return { agent, init: init.result, call };
}

test('memory without swarm: a level-3 manifest gets memory (listed, answered) while conformanceLevel stays level-2', async () => {
  const s = await session(3, [group('tools', 2, TOOLS), group('memory', 3, MEMORY)]);
  assert.is(s.agent.runtimeLevel(), 2);
  assert.is(s.init.conformanceLevel, 'level-2');
  assert.equal(s.init.capabilities, { tools: {}, memory: {} });
  for (const m of MEMORY) assert.equal((await s.call(m)).result, { answered: m });
  const swarm = await s.call('claw.swarm.delegate');
  assert.equal(swarm.error, { code: -32601, message: 'Method not found: claw.swarm.delegate' });
});

test('the same runtime with a level-2 manifest: memory methods are -32601, memory not listed', async () => {
  const s = await session(2, [group('tools', 2, TOOLS), group('memory', 3, MEMORY)]);
  assert.is(s.init.conformanceLevel, 'level-2');
  assert.equal(s.init.capabilities, { tools: {} });
  const r = await s.call('claw.memory.store');
  assert.equal(r.error, {
    code: -32601,
    message: 'Method not found: claw.memory.store needs conformance level-3, this agent is level-2',
    data: { conformanceLevel: 'level-2' },
  });
  assert.equal((await s.call('claw.tool.call')).result, { answered: 'claw.tool.call' });
});

test('a partial group is not implemented: not listed, its methods -32601', async () => {
  const s = await session(3, [group('tools', 2, TOOLS), group('memory', 3, MEMORY.slice(0, 2))]);
  assert.equal(s.init.capabilities, { tools: {} });
  assert.is((await s.call('claw.memory.query')).error.code, -32601);
});

test('every group implemented: level-3, all groups; a non-empty request gets the intersection', async () => {
  const mods = [group('tools', 2, TOOLS), group('memory', 3, MEMORY), group('swarm', 3, SWARM)];
  const s = await session(3, mods);
  assert.is(s.agent.runtimeLevel(), 3);
  assert.is(s.init.conformanceLevel, 'level-3');
  assert.equal(s.init.capabilities, { tools: {}, swarm: {}, memory: {} });
  assert.equal((await s.call('claw.swarm.discover')).result, { answered: 'claw.swarm.discover' });
  const only = await session(3, mods, { memory: {} });
  assert.equal(only.init.capabilities, { memory: {} });
});

test('swarm without memory: claw.swarm.result is answered with the rest of its group on a level-3 manifest', async () => {
  const s = await session(3, [group('tools', 2, TOOLS), group('swarm', 3, SWARM)]);
  assert.is(s.init.conformanceLevel, 'level-2');
  assert.equal(s.init.capabilities, { tools: {}, swarm: {} });
  assert.equal((await s.call('claw.swarm.result')).result, { answered: 'claw.swarm.result' });
});

test('no tools group: level-1 runtime; a level-3 manifest still gets memory by the per-group rule', async () => {
  const s = await session(3, [group('memory', 3, MEMORY)]);
  assert.is(s.agent.runtimeLevel(), 1);
  assert.is(s.init.conformanceLevel, 'level-1');
  assert.equal(s.init.capabilities, { memory: {} });
  assert.equal((await s.call('claw.memory.compact')).result, { answered: 'claw.memory.compact' });
});

test.run();
