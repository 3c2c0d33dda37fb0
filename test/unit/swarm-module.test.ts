// The kernel module: STARTING refuses a backend it cannot honour, an in-process swarm of two
// modules in one process works end to end through the module's methods, and a peer's task goes
// through the kernel dispatch as this agent's claw.tool.call.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { swarmModule } from '../../src/runtime/swarm-module.ts';
import { InflightTracker } from '../../src/kernel/inflight.ts';
import { ProtocolError } from '../../src/protocol/errors.ts';
import type { Session } from '../../src/kernel/agent.ts';
import { makeManifest, primitive, captureLogger } from './helpers/fakes.ts';
import { spec } from './swarm-fixture.ts';

const clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setInterval: (f: () => void, ms: number) => {
    const t = setInterval(f, ms);
    return { cancel: () => clearInterval(t) };
  },
  setTimeout: (f: () => void, ms: number) => {
    const t = setTimeout(f, ms);
    return { cancel: () => clearTimeout(t) };
  },
};

function session(identity: string, backend: string, swarmName: string): Session {
  const s = spec({
    topology: 'leader-worker',
    agents: [{ identity_ref: 'boss', role: 'leader' }, { identity_ref: 'hand', role: 'worker' }],
  });
  s.coordination.backend = backend as any;
  return {
    manifest: makeManifest(3, { identity: primitive('Identity', identity), swarm: primitive('Swarm', swarmName, s as any) }),
    protocolVersion: '0.3.0',
    level: 3,
    capabilities: {},
    abort: new AbortController(),
  };
}

const agentStub = { inflight: new InflightTracker() } as any;
// Handlers may throw synchronously (the router accepts both); a promise either way here.
const call = (mod: ReturnType<typeof swarmModule>, method: string, params: unknown): Promise<any> =>
  Promise.resolve().then(() => mod.methods![method].handler(params, { transport: 'test' }, agentStub));

test('a manifest backend that is not built in, with no swarm.bus, is refused at STARTING with -32040', async () => {
  const mod = swarmModule({ config: {}, log: captureLogger(), clock, cwd: '/', notify() {}, dispatch: async () => ({}) });
  try {
    await mod.start!(session('boss', 'redis', 'sw-redis'), agentStub);
    assert.unreachable();
  } catch (e) {
    assert.instance(e, ProtocolError);
    assert.is((e as ProtocolError).code, -32040);
    assert.match((e as ProtocolError).message, 'swarm.bus');
  }
});

test('a bus scheme this build does not carry is refused at STARTING (-32040), not silently replaced', async () => {
  const mod = swarmModule({ config: { swarm: { bus: 'amqp://127.0.0.1:1' } }, log: captureLogger(), clock, cwd: '/', notify() {}, dispatch: async () => ({}) });
  try {
    await mod.start!(session('boss', 'in-process', 'sw-amqp'), agentStub);
    assert.unreachable();
  } catch (e) {
    assert.is((e as ProtocolError).code, -32040);
    assert.match((e as ProtocolError).message, 'not available in this build');
  }
});

test('in-process swarm of two modules: discover, delegate, the worker dispatches its own tool call, result, broadcast', async () => {
  const calls: any[] = [];
  const notes: any[] = [];
  const mk = (self: string) =>
    swarmModule({
      config: {},
      log: captureLogger(),
      clock,
      cwd: '/',
      notify: (n) => notes.push({ self, n }),
      dispatch: async (method, params) => {
        calls.push({ self, method, params });
        return { content: [{ type: 'text', text: `${self} ran ${(params as any).name}` }] };
      },
    });
  const boss = mk('boss');
  const hand = mk('hand');
  await hand.start!(session('hand', 'in-process', 'sw-mem'), agentStub);
  await boss.start!(session('boss', 'in-process', 'sw-mem'), agentStub);
  try {
    assert.equal(await call(boss, 'claw.swarm.discover', { swarm: 'sw-mem' }), { peers: [{ identity: 'hand', uri: 'claw://local/identity/hand', status: 'ready' }] });
    const params = { task_id: 'T1', task: { description: 'd', input: { tool: { name: 'echo', arguments: { text: 'x' } } } }, context: { request_id: 'R1', swarm: 'sw-mem' } };
    assert.equal(await call(boss, 'claw.swarm.delegate', params), { acknowledged: true, task_id: 'T1', peers: ['hand'] });
    const rec: any = await call(boss, 'claw.swarm.result', { task_id: 'T1', wait_ms: 2000 });
    assert.is(rec.state, 'completed');
    assert.equal(rec.result, { content: [{ type: 'text', text: 'hand ran echo' }] });
    assert.equal(calls, [{ self: 'hand', method: 'claw.tool.call', params: { name: 'echo', arguments: { text: 'x' }, context: { request_id: 'peer:boss:R1', identity: 'hand' } } }]);
    assert.equal(await call(boss, 'claw.swarm.result', {}), { dead_letter: [] });
    assert.is(await call(boss, 'claw.swarm.delegate', { task_id: 'x' }).then(() => 0, (e: ProtocolError) => e.code), -32602);
    assert.is(await call(boss, 'claw.swarm.result', { task_id: 'nope' }).then(() => 0, (e: ProtocolError) => e.code), -32602);
    assert.equal(await call(boss, 'claw.swarm.broadcast', { swarm: 'sw-mem', message: { m: 1 } }), { delivered: ['hand'], unreachable: [] });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(notes, [{ self: 'hand', n: { jsonrpc: '2.0', method: 'claw.swarm.broadcast', params: { swarm: 'sw-mem', message: { m: 1 }, from: 'boss' } } }]);
  } finally {
    await boss.stop!(session('boss', 'in-process', 'sw-mem'));
    await hand.stop!(session('hand', 'in-process', 'sw-mem'));
  }
  // Stopped: the methods say there is no swarm (-32040), and the peer reads unavailable to others.
  assert.is(await call(boss, 'claw.swarm.discover', {}).then(() => 0, (e: ProtocolError) => e.code), -32040);
});

test.run();
