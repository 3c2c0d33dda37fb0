import { test } from 'uvu';
import { documentKey } from '../../src/manifest/loader.ts';
import * as assert from 'uvu/assert';
import { Agent, type KernelModule, type Session, type AgentOptions } from '../../src/kernel/agent.ts';
import { Router } from '../../src/kernel/router.ts';
import type { MethodSpec } from '../../src/kernel/methods/index.ts';
import type { JsonRpcNotification } from '../../src/protocol/jsonrpc.ts';
import type { ResolvedManifest } from '../../src/manifest/resolved.ts';
import type { LoadResult } from '../../src/manifest/loader.ts';
import type { RuntimeConfig } from '../../src/config/runtime-config.ts';
import { ProtocolError } from '../../src/protocol/errors.ts';
import { FakeClock, captureLogger, deferred, makeManifest, textFrame, tick, until } from './helpers/fakes.ts';

const INIT_PARAMS = {
  protocolVersion: '0.3.0',
  clientInfo: { name: 'test-operator', version: '1.0.0' },
  manifest: { kind: 'Claw', metadata: { name: 'test-agent' }, spec: {} },
  capabilities: {},
};

interface HarnessOpts {
  manifest?: ResolvedManifest;
  load?: (value: unknown, defaultClaw: string) => Promise<LoadResult>;
  modules?: KernelModule[];
  config?: RuntimeConfig;
  launchManifest?: ResolvedManifest;
}

function harness(o: HarnessOpts = {}) {
  const clock = new FakeClock();
  const log = captureLogger();
  const notes: JsonRpcNotification[] = [];
  const loads: [unknown, string][] = [];
  const manifest = o.manifest ?? makeManifest(1);
  const opts: AgentOptions = {
    clock,
    log,
    config: o.config ?? {},
    notify: (n) => notes.push(n),
    launchManifest: o.launchManifest,
    loadWireManifest:
      o.load ??
      (async (value, defaultClaw) => {
        loads.push([value, defaultClaw]);
        return { manifest, issues: [] };
      }),
    modules: o.modules,
  };
  const agent = new Agent(opts);
  const router = new Router({ dispatch: agent.dispatch, inflight: agent.inflight, log });
  const replies: any[] = [];
  let seq = 0;
  /** Write one request frame; returns its id. */
  const send = (method: string, params?: unknown): number => {
    const id = ++seq;
    router.handle(textFrame(JSON.stringify(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params }), replies), 'test');
    return id;
  };
  const notify = (method: string, params?: unknown) =>
    router.handle(textFrame(JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) }), replies), 'test');
  const replyTo = (id: number) => replies.find((r) => r.id === id);
  const wait = async (id: number, timeoutMs = 3_000) => {
    await until(() => replyTo(id) !== undefined, timeoutMs);
    return replyTo(id);
  };
  const call = async (method: string, params?: unknown) => wait(send(method, params));
  const init = async (params: Record<string, unknown> = {}) => call('claw.initialize', { ...INIT_PARAMS, ...params });
  const transitions = () => log.entries.filter((e) => e.msg === 'lifecycle.transition').map((e) => `${e.fields!.from}>${e.fields!.to}`);
  return { clock, log, notes, loads, agent, router, replies, send, notify, wait, call, init, replyTo, transitions };
}

/** A module with a slow level-1 method: it runs until released, or until the session is aborted. */
function slowModule() {
  const runs: { id: unknown; release: (v: unknown) => void; signal: AbortSignal; sawAbort: boolean }[] = [];
  const stops: Session[] = [];
  const starts: Session[] = [];
  const slow: MethodSpec = {
    level: 1,
    states: ['READY', 'STOPPING'],
    handler(params, ctx, agent) {
      const signal = agent.session!.abort.signal;
      const d = deferred<unknown>();
      let settled = false;
      const finish = (v: unknown) => {
        settled = true;
        d.resolve(v);
      };
      const run = { id: ctx.id, release: finish, signal, sawAbort: false };
      runs.push(run);
      const ms = (params as { ms?: number } | undefined)?.ms;
      if (ms !== undefined) setTimeout(() => finish({ slept: ms }), ms);
      signal.addEventListener('abort', () => {
        if (settled) return;
        run.sawAbort = true;
        d.reject(new Error('aborted by shutdown'));
      });
      return d.promise;
    },
  };
  const mod: KernelModule = {
    name: 'slow',
    methods: { 'test.slow': slow },
    async start(s) {
      starts.push(s);
    },
    async stop(s) {
      stops.push(s);
    },
  };
  return { mod, runs, stops, starts };
}

/** A module registering every Level 2 method (spec §11 method table). */
function toolModule(): KernelModule {
  const m = (name: string): MethodSpec => ({ level: 2, states: ['READY'], handler: () => ({ called: name }) });
  return { name: 'tools', methods: { 'claw.tool.call': m('call'), 'claw.tool.approve': m('approve'), 'claw.tool.deny': m('deny') } };
}

// ---------------------------------------------------------------------------------------------
// initialize, status

test('initialize → READY: result shape, level, capabilities, agentInfo', async () => {
  const h = harness();
  assert.is(h.agent.lifecycle.state, 'INIT');
  const r = await h.init();
  assert.equal(r, {
    jsonrpc: '2.0',
    id: 1,
    result: {
      protocolVersion: '0.3.0',
      agentInfo: { name: 'test-identity', version: '1.2.3' },
      conformanceLevel: 'level-1',
      capabilities: {},
    },
  });
  assert.is(h.agent.lifecycle.state, 'READY');
  assert.equal(h.transitions(), ['INIT>STARTING', 'STARTING>READY']);
  assert.equal(h.loads, [[INIT_PARAMS.manifest, '0.3.0']], 'wire manifest loaded with the negotiated version');
  const t = h.log.entries.find((e) => e.msg === 'lifecycle.transition')!;
  assert.is(t.fields!.event, 'lifecycle.transition');
  assert.type(t.fields!.duration_ms, 'number');
});

test('initialize: agentInfo.version defaults to 0.0.0 without metadata.version', async () => {
  const h = harness({ manifest: makeManifest(1, { version: undefined }) });
  assert.equal((await h.init()).result.agentInfo, { name: 'test-identity', version: '0.0.0' });
});

test('initialize: negotiated version (0.2.7 → 0.2.0) is used for the manifest and the reply', async () => {
  const h = harness();
  const r = await h.init({ protocolVersion: '0.2.7' });
  assert.is(r.result.protocolVersion, '0.2.0');
  assert.is(h.loads[0][1], '0.2.0');
});

test('initialize: unsupported version → -32001 with data.supported, state unchanged, manifest not loaded', async () => {
  const h = harness();
  const r = await h.init({ protocolVersion: '9.0.0', manifest: { spec: {} } });
  assert.equal(r.error, { code: -32001, message: 'Protocol version not supported', data: { supported: ['0.3.0', '0.2.0'] } });
  assert.is(h.agent.lifecycle.state, 'INIT');
  assert.equal(h.loads, []);
});

test('initialize: invalid params → -32602 with data.issues', async () => {
  const h = harness();
  const r = await h.call('claw.initialize', { protocolVersion: '0.3.0' });
  assert.is(r.error.code, -32602);
  assert.ok(Array.isArray(r.error.data.issues) && r.error.data.issues.length > 0);
  for (const i of r.error.data.issues) assert.ok(typeof i.path === 'string' && typeof i.message === 'string');
  assert.ok(r.error.data.issues.some((i: any) => i.path === 'clientInfo'));
  assert.is(h.agent.lifecycle.state, 'INIT');
});

test('initialize: an invalid manifest → -32602 with the loader issues; state unchanged', async () => {
  const h = harness({
    load: async () => ({ issues: [{ file: '<initialize>', path: 'spec.identity', message: 'identity is required', rule: 'schema', section: '§6' }] }),
  });
  const r = await h.init();
  assert.is(r.error.code, -32602);
  assert.equal(r.error.data.issues, [{ path: 'spec.identity', message: 'identity is required', rule: 'schema', section: '§6' }]);
  assert.is(h.agent.lifecycle.state, 'INIT');
});

test('initialize: the launch manifest wins over the one sent', async () => {
  const launch = makeManifest(1, { name: 'launched', identity: { ...makeManifest().identity, name: 'launch-identity' } });
  const h = harness({ launchManifest: launch, manifest: makeManifest(1, { name: 'sent' }) });
  const r = await h.init();
  assert.is(r.result.agentInfo.name, 'launch-identity');
  assert.is(h.agent.session!.manifest, launch);
});

test('initialize: the launch file sent again (sourceKey) is not validated a second time; anything else is', async () => {
  const doc = { claw: '0.3.0', kind: 'Claw', metadata: { name: 'launched' }, spec: { identity: { inline: { personality: 'p' } } } };
  const launch = { ...makeManifest(1, { name: 'launched' }), sourceKey: documentKey(doc) };
  const same = harness({ launchManifest: launch });
  const r = await same.init({ manifest: structuredClone(doc) });
  assert.ok(r.result, JSON.stringify(r.error));
  assert.is(same.loads.length, 0, 'no second validation');
  assert.is(same.agent.session!.manifest, launch);
  const reordered = harness({ launchManifest: launch });
  await reordered.init({ manifest: { spec: doc.spec, metadata: doc.metadata, kind: 'Claw', claw: '0.3.0' } });
  assert.is(reordered.loads.length, 1, 'the same values in another key order are simply validated');
  const other = harness({ launchManifest: launch });
  await other.init({ manifest: { ...doc, metadata: { name: 'other' } } });
  assert.is(other.loads.length, 1, 'a different document is validated');
  const noKey = harness({ launchManifest: makeManifest(1, { name: 'launched' }) });
  await noKey.init({ manifest: doc });
  assert.is(noKey.loads.length, 1, 'a launch manifest with file references (no sourceKey) validates what is sent');
});

test('status before initialize: -32600 with data.state INIT', async () => {
  const h = harness();
  const r = await h.call('claw.status');
  assert.is(r.error.code, -32600);
  assert.equal(r.error.data, { state: 'INIT' });
  assert.match(r.error.message, /claw\.initialize first/);
});

test('status: READY with uptime from the monotonic clock', async () => {
  const h = harness();
  await h.init();
  assert.equal((await h.call('claw.status')).result, { state: 'READY', uptime_ms: 0 });
  h.clock.mono += 45_000;
  assert.equal((await h.call('claw.status', {})).result, { state: 'READY', uptime_ms: 45_000 });
});

test('status: params {} (spec), extra keys and [] are all accepted', async () => {
  const h = harness();
  await h.init();
  for (const params of [{}, { extra: 1 }, []]) {
    const r = await h.call('claw.status', params);
    assert.equal(r.result, { state: 'READY', uptime_ms: 0 }, JSON.stringify(params));
  }
});

test('unknown method → -32601', async () => {
  const h = harness();
  await h.init();
  const r = await h.call('claw.nope');
  assert.equal(r.error, { code: -32601, message: 'Method not found: claw.nope' });
});

test('a second initialize during a session → -32600 with the state', async () => {
  const h = harness();
  await h.init();
  const r = await h.init();
  assert.is(r.error.code, -32600);
  assert.equal(r.error.data, { state: 'READY' });
  assert.is(h.agent.lifecycle.state, 'READY');
});

test('a repeated initialize is checked like a first one before the state: -32001 for another major, -32602 for bad params', async () => {
  const h = harness();
  await h.init();
  const future = await h.init({ protocolVersion: '1.0.0' });
  assert.is(future.error.code, -32001);
  assert.equal(future.error.data, { supported: ['0.3.0', '0.2.0'] });
  const bad = await h.init({ clientInfo: 'nobody' });
  assert.is(bad.error.code, -32602);
  assert.equal(bad.error.data.issues.map((i: { path: string }) => i.path), ['clientInfo']);
  const noParams = await h.call('claw.initialize');
  assert.is(noParams.error.code, -32602);
  // A valid one is refused for the state; none of them touched the session.
  const again = await h.init();
  assert.equal([again.error.code, again.error.data], [-32600, { state: 'READY' }]);
  assert.is(h.agent.lifecycle.state, 'READY');
  assert.equal(h.transitions(), ['INIT>STARTING', 'STARTING>READY']);
});

test('pipelined: status written right behind initialize waits for its reply', async () => {
  const gate = deferred();
  const h = harness({
    modules: [
      {
        name: 'slow-start',
        async start() {
          await gate.promise;
        },
      },
    ],
  });
  const i = h.send('claw.initialize', INIT_PARAMS);
  const s = h.send('claw.status');
  await tick(10);
  assert.is(h.replies.length, 0);
  gate.resolve();
  const sr = await h.wait(s);
  assert.ok(h.replies.findIndex((r) => r.id === i) < h.replies.findIndex((r) => r.id === s), 'initialize answered first');
  assert.is(sr.result.state, 'READY');
});

test('claw.initialized notification: accepted silently', async () => {
  const h = harness();
  await h.init();
  h.notify('claw.initialized');
  await tick(5);
  assert.is(h.replies.length, 1);
});

// ---------------------------------------------------------------------------------------------
// conformance level and capabilities

test('level = min(manifest, runtime): a level-3 manifest on a level-1 runtime is level-1, no groups', async () => {
  const h = harness({ manifest: makeManifest(3) });
  const r = await h.init();
  assert.is(r.result.conformanceLevel, 'level-1');
  assert.equal(r.result.capabilities, {});
  assert.is(h.agent.runtimeLevel(), 1);
});

test('a module registering all Level 2 methods raises the runtime level to 2', async () => {
  const h = harness({ manifest: makeManifest(3), modules: [toolModule()] });
  assert.is(h.agent.runtimeLevel(), 2);
  const r = await h.init();
  assert.is(r.result.conformanceLevel, 'level-2');
  assert.equal(r.result.capabilities, { tools: {} });
  assert.equal((await h.call('claw.tool.call', { name: 'x', arguments: {} })).result, { called: 'call' });
});

test('a partial Level 2 method set does not raise the runtime level', async () => {
  const mod = toolModule();
  delete mod.methods!['claw.tool.deny'];
  const h = harness({ manifest: makeManifest(2), modules: [mod] });
  assert.is(h.agent.runtimeLevel(), 1);
  assert.is((await h.init()).result.conformanceLevel, 'level-1');
});

test('level = min: a level-1 manifest with a level-2 runtime is level-1; Level 2 methods answer -32601 (§11)', async () => {
  const h = harness({ manifest: makeManifest(1), modules: [toolModule()] });
  const r = await h.init();
  assert.is(r.result.conformanceLevel, 'level-1');
  const c = await h.call('claw.tool.call', { name: 'x' });
  assert.is(c.error.code, -32601);
  assert.equal(c.error.data, { conformanceLevel: 'level-1' });
});

test('capabilities: {} is unrestricted; a non-empty request gets the intersection', async () => {
  const cases: [Record<string, unknown>, Record<string, unknown>][] = [
    [{}, { tools: {} }],
    [{ tools: {}, swarm: {}, memory: {} }, { tools: {} }],
    [{ tools: {} }, { tools: {} }],
    [{ swarm: {} }, {}],
    [{ memory: {} }, {}],
  ];
  for (const [req, want] of cases) {
    const h = harness({ manifest: makeManifest(2), modules: [toolModule()] });
    const r = await h.init({ capabilities: req });
    assert.equal(r.result.capabilities, want, JSON.stringify(req));
    assert.equal(h.agent.session!.capabilities, want);
  }
});

// ---------------------------------------------------------------------------------------------
// shutdown

test('shutdown with nothing in flight: {drained: true}, STOPPING → STOPPED, modules stopped', async () => {
  const s = slowModule();
  const h = harness({ modules: [s.mod] });
  await h.init();
  const r = await h.call('claw.shutdown', { reason: 'operator-requested', timeout_ms: 1000 });
  assert.equal(r.result, { drained: true });
  assert.is(h.agent.lifecycle.state, 'STOPPED');
  assert.equal(h.transitions(), ['INIT>STARTING', 'STARTING>READY', 'READY>STOPPING', 'STOPPING>STOPPED']);
  assert.is(s.stops.length, 1);
  assert.equal((await h.call('claw.status')).result.state, 'STOPPED');
});

test('shutdown (a): slow request finishes within timeout_ms → {drained: true}, its result still delivered first', async () => {
  const s = slowModule();
  const h = harness({ modules: [s.mod] });
  await h.init();
  const slowId = h.send('test.slow', { ms: 40 });
  await until(() => s.runs.length === 1);
  const started = Date.now();
  const shut = await h.call('claw.shutdown', { timeout_ms: 5_000 });
  const took = Date.now() - started;
  assert.equal(shut.result, { drained: true });
  assert.ok(took < 2_000, `drained when the work finished (${took} ms), not at the timeout`);
  const slow = h.replyTo(slowId);
  assert.equal(slow, { jsonrpc: '2.0', id: slowId, result: { slept: 40 } });
  assert.ok(h.replies.indexOf(slow) < h.replies.indexOf(shut), 'the drained request is answered before {drained: true}');
  assert.is(s.runs[0].sawAbort, false, 'the request had finished before the session was aborted');
  assert.is(h.agent.lifecycle.state, 'STOPPED');
});

test('shutdown (b): slow request exceeds timeout_ms → {drained: false} within ~timeout_ms; session aborted', async () => {
  const s = slowModule();
  const h = harness({ modules: [s.mod] });
  await h.init();
  const slowId = h.send('test.slow');
  await until(() => s.runs.length === 1);
  const session = h.agent.session!;
  assert.is(session.abort.signal.aborted, false);
  const started = Date.now();
  const shut = await h.call('claw.shutdown', { timeout_ms: 60 });
  const took = Date.now() - started;
  assert.equal(shut.result, { drained: false });
  assert.ok(took >= 50 && took < 1_500, `answered after ~timeout_ms (${took} ms)`);
  assert.is(session.abort.signal.aborted, true, 'Session.abort is aborted');
  assert.is(s.runs[0].signal.aborted, true);
  assert.is(s.runs[0].sawAbort, true, 'the slow handler saw the abort');
  // docs/protocol.md: its reply (an error) is still sent.
  const slow = await h.wait(slowId);
  assert.ok(slow.error, 'the cancelled request is answered with an error');
  assert.is(h.agent.lifecycle.state, 'STOPPED');
});

test('shutdown: timeout_ms 0 with work in flight → {drained: false} at once', async () => {
  const s = slowModule();
  const h = harness({ modules: [s.mod] });
  await h.init();
  h.send('test.slow');
  await until(() => s.runs.length === 1);
  const r = await h.call('claw.shutdown', { timeout_ms: 0 });
  assert.equal(r.result, { drained: false });
});

test('shutdown: requests arriving after the shutdown are not waited for', async () => {
  const s = slowModule();
  const h = harness({ modules: [s.mod] });
  await h.init();
  h.send('test.slow'); // before: waited for
  await until(() => s.runs.length === 1);
  const shutId = h.send('claw.shutdown', { timeout_ms: 5_000 });
  await tick(5);
  assert.is(h.agent.lifecycle.state, 'STOPPING');
  const lateId = h.send('test.slow'); // after: not waited for
  await until(() => s.runs.length === 2);
  await tick(10);
  assert.is(h.replyTo(shutId), undefined, 'still waiting for the earlier request');
  const started = Date.now();
  s.runs[0].release('early-done');
  const shut = await h.wait(shutId);
  assert.equal(shut.result, { drained: true });
  assert.ok(Date.now() - started < 2_000);
  assert.is(s.runs[1].signal.aborted, true, 'late work is cancelled when the session ends');
  const late = await h.wait(lateId);
  assert.ok(late.error);
});

test('shutdown: the same default applies from config when timeout_ms is absent', async () => {
  const s = slowModule();
  const h = harness({ modules: [s.mod], config: { shutdown: { timeout_ms: 40 } } });
  await h.init();
  h.send('test.slow');
  await until(() => s.runs.length === 1);
  const started = Date.now();
  assert.equal((await h.call('claw.shutdown')).result, { drained: false });
  assert.ok(Date.now() - started < 1_500);
});

test('shutdown: concurrent shutdowns share one stop', async () => {
  const s = slowModule();
  const h = harness({ modules: [s.mod] });
  await h.init();
  h.send('test.slow');
  await until(() => s.runs.length === 1);
  const a = h.send('claw.shutdown', { timeout_ms: 5_000 });
  const b = h.send('claw.shutdown', { timeout_ms: 5_000 });
  await tick(10);
  assert.is(h.replyTo(a), undefined);
  assert.is(h.replyTo(b), undefined);
  s.runs[0].release('ok');
  assert.equal((await h.wait(a)).result, { drained: true });
  assert.equal((await h.wait(b)).result, { drained: true });
  assert.is(s.stops.length, 1, 'modules stopped once');
  assert.equal(h.transitions().filter((t) => t === 'STOPPING>STOPPED'), ['STOPPING>STOPPED']);
});

test('shutdown in STOPPED → {drained: true}', async () => {
  const h = harness();
  await h.init();
  await h.call('claw.shutdown');
  assert.equal((await h.call('claw.shutdown')).result, { drained: true });
});

test('shutdown: bad params → -32602', async () => {
  const h = harness();
  await h.init();
  for (const params of [{ timeout_ms: -1 }, { timeout_ms: 1.5 }, { timeout_ms: '10' }, { reason: 5 }]) {
    const r = await h.call('claw.shutdown', params);
    assert.is(r.error?.code, -32602, JSON.stringify(params));
  }
  assert.is(h.agent.lifecycle.state, 'READY');
});

test('shutdown before initialize → -32600', async () => {
  const h = harness();
  const r = await h.call('claw.shutdown');
  assert.is(r.error.code, -32600);
  assert.equal(r.error.data, { state: 'INIT' });
});

test('methods not accepted in STOPPED → -32600 with the state', async () => {
  const s = slowModule();
  const h = harness({ modules: [s.mod] });
  await h.init();
  await h.call('claw.shutdown');
  const r = await h.call('test.slow');
  assert.is(r.error.code, -32600);
  assert.equal(r.error.data, { state: 'STOPPED' });
  assert.match(r.error.message, /send claw\.initialize to start a new one/);
});

test('re-initialize after STOPPED: a new session, READY again, fresh abort signal, uptime restarts', async () => {
  const s = slowModule();
  const h = harness({ modules: [s.mod] });
  await h.init();
  h.clock.mono += 10_000;
  await h.call('claw.shutdown');
  const first = h.agent.session!;
  assert.is(first.abort.signal.aborted, true);
  const r = await h.init();
  assert.ok(r.result, JSON.stringify(r));
  assert.is(h.agent.lifecycle.state, 'READY');
  assert.is.not(h.agent.session, first);
  assert.is(h.agent.session!.abort.signal.aborted, false);
  assert.is(s.starts.length, 2);
  assert.equal((await h.call('claw.status')).result, { state: 'READY', uptime_ms: 0 });
  // And the new session can be shut down too (the previous stop is not reused).
  h.send('test.slow');
  await until(() => s.runs.length === 1);
  assert.equal((await h.call('claw.shutdown', { timeout_ms: 20 })).result, { drained: false });
  assert.is(s.stops.length, 2);
});

test('initialize pipelined behind a shutdown waits for it, then opens a new session', async () => {
  const s = slowModule();
  const h = harness({ modules: [s.mod] });
  await h.init();
  h.send('test.slow');
  await until(() => s.runs.length === 1);
  const shut = h.send('claw.shutdown', { timeout_ms: 5_000 });
  const again = h.send('claw.initialize', INIT_PARAMS);
  await tick(10);
  assert.is(h.replyTo(again), undefined);
  s.runs[0].release(1);
  assert.equal((await h.wait(shut)).result, { drained: true });
  assert.ok((await h.wait(again)).result);
  assert.is(h.agent.lifecycle.state, 'READY');
});

// ---------------------------------------------------------------------------------------------
// module start failure

test('module start throwing → ERROR; initialize fails (-32603, no internals); started modules rolled back', async () => {
  const order: string[] = [];
  const ok: KernelModule = {
    name: 'ok',
    async start() {
      order.push('ok.start');
    },
    async stop() {
      order.push('ok.stop');
    },
  };
  const bad: KernelModule = {
    name: 'bad',
    async start() {
      order.push('bad.start');
      throw new Error('cannot connect to db at 10.0.0.5 with password hunter2');
    },
    async stop() {
      order.push('bad.stop');
    },
  };
  const h = harness({ modules: [ok, bad] });
  const r = await h.init();
  assert.equal(r.error, { code: -32603, message: 'Internal error' });
  assert.is(h.agent.lifecycle.state, 'ERROR');
  assert.equal(order, ['ok.start', 'bad.start', 'ok.stop']);
  assert.equal(h.transitions(), ['INIT>STARTING', 'STARTING>ERROR']);
  assert.equal((await h.call('claw.status')).result.state, 'ERROR');
  h.clock.advance(120_000);
  assert.equal(h.notes, [], 'no heartbeat outside READY');
});

test('module start throwing a ProtocolError: passed through to the initialize reply', async () => {
  const h = harness({
    modules: [
      {
        name: 'p',
        async start() {
          throw new ProtocolError(-32020, 'Provider unavailable', { provider: 'p1' });
        },
      },
    ],
  });
  const r = await h.init();
  assert.equal(r.error, { code: -32020, message: 'Provider unavailable', data: { provider: 'p1' } });
  assert.is(h.agent.lifecycle.state, 'ERROR');
});

test('after a failed start: initialize may be retried (ERROR → STARTING → READY)', async () => {
  let fail = true;
  const h = harness({
    modules: [
      {
        name: 'flaky',
        async start() {
          if (fail) throw new Error('not yet');
        },
      },
    ],
  });
  assert.ok((await h.init()).error);
  fail = false;
  const r = await h.init();
  assert.ok(r.result, JSON.stringify(r));
  assert.is(h.agent.lifecycle.state, 'READY');
});

test('after a failed start: shutdown from ERROR reaches STOPPED without stopping rolled-back modules again', async () => {
  const stops: string[] = [];
  const h = harness({
    modules: [
      { name: 'a', async start() {}, async stop() { stops.push('a'); } },
      {
        name: 'b',
        async start() {
          throw new Error('b failed');
        },
        async stop() {
          stops.push('b');
        },
      },
    ],
  });
  await h.init();
  assert.equal(stops, ['a'], 'rollback stopped the started module');
  const r = await h.call('claw.shutdown', { timeout_ms: 100 });
  assert.equal(r.result, { drained: true });
  assert.is(h.agent.lifecycle.state, 'STOPPED');
  // KernelModule.stop "releases what start acquired": a module is stopped once per successful start.
  assert.equal(stops, ['a'], 'no second stop of a rolled-back module, no stop of a module whose start failed');
});

test('module stop throwing is logged, the stop still completes', async () => {
  const h = harness({
    modules: [
      {
        name: 'grumpy',
        async stop() {
          throw new Error('stop failed');
        },
      },
    ],
  });
  await h.init();
  assert.equal((await h.call('claw.shutdown')).result, { drained: true });
  assert.is(h.agent.lifecycle.state, 'STOPPED');
  assert.ok(h.log.entries.some((e) => e.level === 'warn' && e.fields?.module === 'grumpy'));
});

// ---------------------------------------------------------------------------------------------
// heartbeat through the agent

test('heartbeat: none before initialize; first one a full interval after READY; none once STOPPING', async () => {
  const h = harness({ manifest: makeManifest(1, { annotations: { heartbeat_interval_ms: 1000 } }) });
  h.clock.advance(60_000);
  assert.equal(h.notes, []);
  await h.init();
  h.clock.advance(999);
  assert.equal(h.notes, []);
  h.clock.advance(1);
  assert.is(h.notes.length, 1);
  assert.is(h.notes[0].method, 'claw.heartbeat');
  assert.equal((h.notes[0].params as any).state, 'READY');
  assert.is((h.notes[0].params as any).uptime_ms, 1000);
  await h.call('claw.shutdown');
  h.clock.advance(10_000);
  assert.is(h.notes.length, 1);
  assert.is(h.clock.pending, 0, 'heartbeat timer cancelled');
});

test('heartbeat interval: runtime config wins over the manifest annotation; default 30 s', async () => {
  const a = harness({ manifest: makeManifest(1, { annotations: { heartbeat_interval_ms: 1000 } }), config: { heartbeat: { interval_ms: 5000 } } });
  await a.init();
  a.clock.advance(4999);
  assert.is(a.notes.length, 0);
  a.clock.advance(1);
  assert.is(a.notes.length, 1);
  const b = harness();
  await b.init();
  b.clock.advance(29_999);
  assert.is(b.notes.length, 0);
  b.clock.advance(1);
  assert.is(b.notes.length, 1);
  const c = harness({ manifest: makeManifest(1, { annotations: { heartbeat_interval_ms: 'soon' } }) });
  await c.init();
  c.clock.advance(30_000);
  assert.is(c.notes.length, 1, 'a non-integer annotation falls back to 30 s');
});

// ---------------------------------------------------------------------------------------------
// Agent.shutdown (signals, stdin closed)

test('agent.shutdown(reason): stops a READY session with the configured timeout', async () => {
  const s = slowModule();
  const h = harness({ modules: [s.mod], config: { shutdown: { timeout_ms: 30 } } });
  await h.init();
  h.send('test.slow');
  await until(() => s.runs.length === 1);
  const started = Date.now();
  await h.agent.shutdown('SIGTERM');
  assert.ok(Date.now() - started < 1_500);
  assert.is(h.agent.lifecycle.state, 'STOPPED');
  assert.is(s.runs[0].signal.aborted, true);
});

test('agent.shutdown(reason) in INIT does nothing', async () => {
  const h = harness();
  await h.agent.shutdown('stdin closed');
  assert.is(h.agent.lifecycle.state, 'INIT');
});

test.run();
