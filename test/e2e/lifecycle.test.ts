// Lifecycle (spec §8, §9.3.1), conformance-level method gating (§11) and the `claw` command line.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runClaw, initParams } from './helpers/claw-process.ts';
import {
  fixture,
  withClaw,
  initialize,
  assertError,
  assertResult,
  waitAfter,
  waitCount,
  sleep,
  stderrRecords,
  transitions,
  exitCode,
  loadYaml,
  NEUTRAL_CWD,
} from './helpers/e2e-util.ts';

const FILE_AGENT = fixture('manifests', 'file-agent.yaml');
const PKG_VERSION: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;

// ------------------------------------------------------------------ state gating

test('before initialize: status and shutdown → -32600 with data.state INIT', async () => {
  await withClaw(['run'], async (c) => {
    assertError(await c.request('claw.status', {}, 1), 1, -32600, { state: 'INIT' });
    assertError(await c.request('claw.shutdown', {}, 2), 2, -32600, { state: 'INIT' });
    assertError(await c.request('claw.shutdown', { reason: 'x', timeout_ms: 10 }, 'sd'), 'sd', -32600, { state: 'INIT' });
    // Still INIT: initialize works.
    assert.is((await initialize(c)).conformanceLevel, 'level-1');
  });
});

test('initialize twice: the second gets -32600 with data.state READY, the session is unchanged', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const again = await c.request('claw.initialize', initParams(), 'again');
    assertError(again, 'again', -32600, { state: 'READY' });
    assert.is((await c.request('claw.status', {}, 's')).result.state, 'READY');
    assert.equal(transitions(c.stderr()), [
      ['INIT', 'STARTING'],
      ['STARTING', 'READY'],
    ]);
  });
});

test('pipelined initialize + status in ONE write: status sees READY', async () => {
  await withClaw(['run'], async (c) => {
    c.sendRaw(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: initParams() })}\n` +
        `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'claw.status', params: {} })}\n` +
        `${JSON.stringify({ jsonrpc: '2.0', method: 'claw.initialized' })}\n` +
        `${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'claw.status' })}\n`,
    );
    await waitCount(c, 3);
    const init = c.messages.find((m) => m.id === 1);
    assert.is(init.result?.conformanceLevel, 'level-1', JSON.stringify(init));
    for (const id of [2, 3]) {
      const s = c.messages.find((m) => m.id === id);
      assert.is(s.result?.state, 'READY', JSON.stringify(c.messages));
    }
    // The initialize reply comes before the replies of what was pipelined behind it (§9.3.1).
    assert.is(c.messages[0].id, 1, JSON.stringify(c.messages));
    await sleep(100);
    assert.is(c.messages.length, 3);
  });
});

test('pipelined initialize + status in one batch: status sees READY', async () => {
  await withClaw(['run'], async (c) => {
    c.send([
      { jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: initParams() },
      { jsonrpc: '2.0', id: 2, method: 'claw.status' },
    ]);
    const r = await c.waitFor(() => true);
    assert.ok(Array.isArray(r) && r.length === 2, JSON.stringify(r));
    const s = r.find((m: any) => m.id === 2);
    assert.is(s.result?.state, 'READY', JSON.stringify(r));
  });
});

test('status during and after shutdown: STOPPING/STOPPED, never an error', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    c.sendRaw(`${JSON.stringify({ jsonrpc: '2.0', id: 'sd', method: 'claw.shutdown', params: {} })}\n${JSON.stringify({ jsonrpc: '2.0', id: 'st', method: 'claw.status' })}\n`);
    const st = await c.waitFor((m) => m.id === 'st');
    assert.ok(['STOPPING', 'STOPPED'].includes(st.result?.state), JSON.stringify(st));
    assertResult(await c.waitFor((m) => m.id === 'sd'), 'sd', { drained: true });
    assert.is((await c.request('claw.status', {}, 'st2')).result?.state, 'STOPPED');
    // An unknown method is still -32601 in STOPPED.
    assertError(await c.request('claw.nonexistent', {}, 'x'), 'x', -32601);
  });
});

test('re-initialize after shutdown starts a new session: READY again, uptime reset', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    await sleep(400);
    const before = await c.request('claw.status', {}, 1);
    assert.ok(before.result.uptime_ms >= 350, JSON.stringify(before));
    assertResult(await c.request('claw.shutdown', {}, 2), 2, { drained: true });
    assert.is((await c.request('claw.status', {}, 3)).result.state, 'STOPPED');

    const base = initParams().manifest as any;
    const second = await c.request('claw.initialize', initParams({ manifest: { ...base, metadata: { name: 'second-bot', version: '2.0.0' } } }), 4);
    assertResult(second, 4, { protocolVersion: '0.3.0', agentInfo: { name: 'second-bot', version: '2.0.0' }, conformanceLevel: 'level-1', capabilities: {} });
    const after = await c.request('claw.status', {}, 5);
    assert.is(after.result.state, 'READY');
    assert.ok(after.result.uptime_ms < before.result.uptime_ms && after.result.uptime_ms < 300, `uptime not reset: ${JSON.stringify(after)}`);
    assert.equal(transitions(c.stderr()), [
      ['INIT', 'STARTING'],
      ['STARTING', 'READY'],
      ['READY', 'STOPPING'],
      ['STOPPING', 'STOPPED'],
      ['STOPPED', 'STARTING'],
      ['STARTING', 'READY'],
    ]);
  });
});

test('every lifecycle.transition event names the agent it concerns (spec §8 Lifecycle Events)', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c); // test-bot
    assertResult(await c.request('claw.shutdown', {}, 'sd'), 'sd', { drained: true });
    const base = initParams().manifest as any;
    await initialize(c, { manifest: { ...base, metadata: { name: 'second-bot' } } });
    // The log is stderr, the reply stdout: two pipes, so the last lines can arrive after the reply.
    const transitions = () => stderrRecords(c.stderr()).filter((r) => r.msg === 'lifecycle.transition');
    for (let i = 0; i < 100 && transitions().length < 6; i++) await new Promise((r) => setTimeout(r, 20));
    const events = transitions().map((r) => `${r.from}→${r.to} ${r.agent}`);
    assert.equal(events, [
      'INIT→STARTING test-bot',
      'STARTING→READY test-bot',
      'READY→STOPPING test-bot',
      'STOPPING→STOPPED test-bot',
      'STOPPED→STARTING second-bot',
      'STARTING→READY second-bot',
    ]);
  });
});

test('shutdown + initialize + status pipelined in one write: a new session, status READY', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const mark = c.messages.length;
    c.sendRaw(
      [
        { jsonrpc: '2.0', id: 'sd', method: 'claw.shutdown', params: { reason: 'restart' } },
        { jsonrpc: '2.0', id: 'init2', method: 'claw.initialize', params: initParams() },
        { jsonrpc: '2.0', id: 'st', method: 'claw.status' },
      ]
        .map((m) => JSON.stringify(m))
        .join('\n') + '\n',
    );
    await waitCount(c, mark + 3);
    const got = (id: string) => c.messages.find((m) => m.id === id);
    assertResult(got('sd'), 'sd', { drained: true });
    assert.is(got('init2').result?.conformanceLevel, 'level-1', JSON.stringify(got('init2')));
    assert.is(got('st').result?.state, 'READY', JSON.stringify(c.messages.slice(mark)));
  });
});

test('a shutdown sent as a notification stops the session without a reply', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const mark = c.messages.length;
    c.send({ jsonrpc: '2.0', method: 'claw.shutdown', params: { reason: 'fire and forget' } });
    const s = await c.request('claw.status', {}, 'st');
    await sleep(100);
    assert.equal(c.messages.slice(mark), [s]);
    assert.ok(['STOPPING', 'STOPPED'].includes(s.result.state), JSON.stringify(s));
    assert.is((await c.request('claw.status', {}, 'st2')).result.state, 'STOPPED');
  });
});

// ------------------------------------------------------------------ launch manifest vs initialize manifest

test('claw run without a manifest: the agent is the manifest sent in initialize', async () => {
  await withClaw(['run'], async (c) => {
    const manifest = loadYaml(FILE_AGENT);
    manifest.metadata.name = 'wire-agent';
    manifest.metadata.version = '3.1.4';
    const r = await c.request('claw.initialize', initParams({ manifest }), 1);
    assertResult(r, 1, { protocolVersion: '0.3.0', agentInfo: { name: 'wire-agent', version: '3.1.4' }, conformanceLevel: 'level-1', capabilities: {} });
    const rec = stderrRecords(c.stderr()).find((x) => x.msg === 'lifecycle.transition' && x.to === 'READY');
    assert.is(rec?.agent, 'wire-agent');
  });
});

test('claw run FILE: a different valid initialize manifest is ignored (agentInfo from the file)', async () => {
  await withClaw(['run', FILE_AGENT], async (c) => {
    const r = await c.request('claw.initialize', initParams(), 1); // TV-L1-04 manifest: test-bot
    assertResult(r, 1, { protocolVersion: '0.3.0', agentInfo: { name: 'file-agent', version: '2.1.0' }, conformanceLevel: 'level-1', capabilities: {} });
  });
});

test('claw run FILE: an invalid initialize manifest is still rejected with -32602', async () => {
  await withClaw(['run', FILE_AGENT], async (c) => {
    const bad = loadYaml(fixture('v030', 'tv-l1-02.yaml'));
    const r = await c.request('claw.initialize', initParams({ manifest: bad }), 1);
    assertError(r, 1, -32602);
    assert.equal(
      r.error.data.issues.map((i: any) => i.path),
      ['spec.identity'],
    );
    assertError(await c.request('claw.status', {}, 2), 2, -32600, { state: 'INIT' });
    // And the launch manifest still starts with a valid one.
    assert.equal((await initialize(c)).agentInfo, { name: 'file-agent', version: '2.1.0' });
  });
});

test('claw run FILE: initialize with protocol 0.2.0 negotiates 0.2.0 and still runs the 0.3.0 launch manifest', async () => {
  await withClaw(['run', FILE_AGENT], async (c) => {
    const manifest = loadYaml(fixture('v020', 'tv-l1-01.yaml'));
    const r = await c.request('claw.initialize', initParams({ protocolVersion: '0.2.0', manifest }), 1);
    assertResult(r, 1, { protocolVersion: '0.2.0', agentInfo: { name: 'file-agent', version: '2.1.0' }, conformanceLevel: 'level-1', capabilities: {} });
  });
});

test('heartbeats resume in a new session after shutdown, with uptime counted from the new READY', async () => {
  await withClaw(['run', '--config', fixture('config', 'heartbeat-200.yaml')], async (c) => {
    await initialize(c);
    await c.waitFor((m) => m.method === 'claw.heartbeat', 2000);
    const sd = await c.request('claw.shutdown', {}, 'sd');
    assertResult(sd, 'sd', { drained: true });
    const mark = c.messages.length;
    await sleep(450);
    assert.equal(
      c.messages.slice(mark).filter((m) => m.method === 'claw.heartbeat'),
      [],
      'heartbeat while STOPPED',
    );
    const init2 = await c.request('claw.initialize', initParams(), 'init2');
    assert.ok(init2.result, JSON.stringify(init2));
    const hb = await waitAfter(c, c.messages.indexOf(init2), (m) => m.method === 'claw.heartbeat', 2000);
    assert.is(hb.params.state, 'READY');
    assert.ok(hb.params.uptime_ms >= 150 && hb.params.uptime_ms < 600, `uptime of the new session: ${hb.params.uptime_ms}`);
  });
});

// ------------------------------------------------------------------ claw:// registry manifests

/** A temporary file registry and a runtime config pointing at it (registry URLs must be absolute). */
function makeRegistry(): { dir: string; config: string } {
  const dir = mkdtempSync(join(tmpdir(), 'claw-e2e-reg-'));
  const doc = loadYaml(FILE_AGENT);
  doc.metadata = { name: 'reg-bot', version: '1.4.0' };
  mkdirSync(join(dir, 'reg', 'acme', 'reg-bot'), { recursive: true });
  writeFileSync(join(dir, 'reg', 'acme', 'reg-bot', '1.4.0.yaml'), JSON.stringify(doc));
  const config = join(dir, 'claw.runtime.yaml');
  // Two registries: the first one misses, so resolution does real file-system work.
  writeFileSync(config, `registries:\n  - name: empty\n    url: file://${join(dir, 'nothing-here')}\n  - name: local\n    url: file://${join(dir, 'reg')}\n`);
  return { dir, config };
}

test('claw.initialize with a claw://registry URI loads the manifest through the configured registries', async () => {
  const reg = makeRegistry();
  try {
    await withClaw(['run', '--config', reg.config], async (c) => {
      const missing = await c.request('claw.initialize', initParams({ manifest: 'claw://registry/acme/nope@1.0.0' }), 1);
      assertError(missing, 1, -32602);
      assert.equal(
        missing.error.data.issues.map((i: any) => i.path),
        ['manifest'],
      );
      const r = await c.request('claw.initialize', initParams({ manifest: 'claw://registry/acme/reg-bot@1.4.0' }), 2);
      assertResult(r, 2, { protocolVersion: '0.3.0', agentInfo: { name: 'reg-bot', version: '1.4.0' }, conformanceLevel: 'level-1', capabilities: {} });
    });
  } finally {
    rmSync(reg.dir, { recursive: true, force: true });
  }
});

test('stdin closing while claw.initialize is in flight: the reply is sent and the new session is stopped before exit', async () => {
  const reg = makeRegistry();
  try {
    const init = { jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: initParams({ manifest: 'claw://registry/acme/reg-bot@1.4.0' }) };
    // stdin carries the initialize and then closes at once.
    const r = await runClaw(['run', '--config', reg.config], { cwd: NEUTRAL_CWD, input: `${JSON.stringify(init)}\n` });
    assert.is(r.code, 0, r.stderr);
    const out = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.is(out.length, 1, r.stdout);
    assert.is(out[0].id, 1);
    assert.is(out[0].result?.agentInfo?.name, 'reg-bot', r.stdout);
    // The session that started must be shut down cleanly (spec §8: READY → STOPPING → STOPPED), and
    // "runtime exiting" must be the last word, not followed by a session starting.
    assert.equal(transitions(r.stderr), [
      ['INIT', 'STARTING'],
      ['STARTING', 'READY'],
      ['READY', 'STOPPING'],
      ['STOPPING', 'STOPPED'],
    ]);
    assert.is(stderrRecords(r.stderr).at(-1).msg, 'runtime exiting');
  } finally {
    rmSync(reg.dir, { recursive: true, force: true });
  }
});

// ------------------------------------------------------------------ process exit

test('exit code 0 when stdin closes (before and after initialize)', async () => {
  await withClaw(['run'], async (c) => {
    assert.is(await c.end(), 0);
  });
  await withClaw(['run'], async (c) => {
    await initialize(c);
    assert.is(await c.end(), 0);
    assert.equal(transitions(c.stderr()).at(-1), ['STOPPING', 'STOPPED']);
    const last = stderrRecords(c.stderr()).at(-1);
    assert.is(last.msg, 'runtime exiting');
    assert.is(last.reason, 'stdin closed');
  });
});

for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  test(`${sig}: clean exit 0 with a lifecycle.transition to STOPPED in the log`, async () => {
    await withClaw(['run', FILE_AGENT], async (c) => {
      await initialize(c);
      assert.is((await c.request('claw.status', {}, 's')).result.state, 'READY');
      c.child.kill(sig);
      const { code, signal } = await exitCode(c);
      assert.is(signal, null, `killed by ${signal} instead of a clean exit`);
      assert.is(code, 0);
      const recs = stderrRecords(c.stderr());
      const stopped = recs.filter((r) => r.msg === 'lifecycle.transition' && r.to === 'STOPPED');
      assert.is(stopped.length, 1, c.stderr());
      assert.is(stopped[0].from, 'STOPPING');
      assert.is(stopped[0].agent, 'file-agent');
      assert.ok(Number.isInteger(stopped[0].duration_ms) && stopped[0].duration_ms >= 0);
      assert.equal(transitions(c.stderr()).slice(-2), [
        ['READY', 'STOPPING'],
        ['STOPPING', 'STOPPED'],
      ]);
      assert.is(recs.at(-1).msg, 'runtime exiting');
      assert.is(recs.at(-1).reason, sig);
      // No heartbeat or stray message after the signal; nothing but replies on stdout.
      assert.equal(
        c.messages.map((m) => m.id),
        [c.messages[0].id, 's'],
      );
    });
  });

  test(`${sig} before initialize: clean exit 0, no transition`, async () => {
    await withClaw(['run'], async (c) => {
      await waitForLog(c, 'runtime started');
      // run.ts logs "runtime started" just before it installs its signal handlers: give it a moment
      // (a signal in that window kills the process with the default action; see the report).
      await sleep(100);
      c.child.kill(sig);
      const { code, signal } = await exitCode(c);
      assert.is(signal, null);
      assert.is(code, 0);
      assert.equal(transitions(c.stderr()), []);
    });
  });
}

async function waitForLog(c: { stderr(): string }, msg: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!c.stderr().includes(`"msg":"${msg}"`)) {
    if (Date.now() > end) throw new Error(`no "${msg}" in the log: ${c.stderr()}`);
    await sleep(10);
  }
}

// ------------------------------------------------------------------ §11 method gating

test('methods above the agent\'s level on a level-1 agent → -32601', async () => {
  await withClaw(['run', FILE_AGENT], async (c) => {
    await initialize(c);
    const above = [
      'claw.tool.call',
      'claw.tool.approve',
      'claw.tool.deny',
      'claw.swarm.delegate',
      'claw.swarm.report',
      'claw.swarm.discover',
      'claw.swarm.broadcast',
      'claw.memory.query',
      'claw.memory.store',
      'claw.memory.compact',
    ];
    for (const [i, m] of above.entries()) assertError(await c.request(m, { name: 'x', arguments: {} }, `m${i}`), `m${i}`, -32601);
    // The agent is untouched.
    assert.is((await c.request('claw.status', {}, 'st')).result.state, 'READY');
  });
});

test('before initialize: a method this runtime has is "send claw.initialize first"; one it lacks is -32601', async () => {
  await withClaw(['run'], async (c) => {
    // claw.tool.call exists (Level 2 is implemented): the lifecycle answers, with the state.
    const r = await c.request('claw.tool.call', { name: 'x', arguments: {} }, 1);
    assertError(r, 1, -32600);
    assert.equal(r.error.data, { state: 'INIT' });
    // claw.world.predict is not a method this runtime has (no world-model methods): -32601.
    assertError(await c.request('claw.world.predict', { query: 'x' }, 2), 2, -32601);
  });
});

// ------------------------------------------------------------------ claw run with bad input

test('claw run bad.yaml: exit 1, the issue path logged on stderr as JSON, nothing on stdout', async () => {
  const bad = fixture('v030', 'tv-l1-02.yaml');
  const r = await runClaw(['run', bad], { cwd: NEUTRAL_CWD, input: `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: initParams() })}\n` });
  assert.is(r.code, 1);
  assert.is(r.stdout, '');
  const recs = stderrRecords(r.stderr);
  const errs = recs.filter((x) => x.level === 'error');
  assert.is(errs.length, 1, r.stderr);
  assert.is(errs[0].msg, 'manifest invalid');
  assert.is(errs[0].path, 'spec.identity');
  assert.is(errs[0].file, bad);
  assert.is(errs[0].rule, 'schema');
  assert.is(errs[0].line, 5);
  assert.ok(errs[0].issue.includes('spec.identity'), errs[0].issue);
});

test('claw run missing.yaml: exit 1, nothing on stdout', async () => {
  const r = await runClaw(['run', fixture('manifests', 'does-not-exist.yaml')], { cwd: NEUTRAL_CWD });
  assert.is(r.code, 1);
  assert.is(r.stdout, '');
  const errs = stderrRecords(r.stderr).filter((x) => x.level === 'error');
  assert.ok(errs.length >= 1, r.stderr);
});

test('claw run with an invalid runtime config: exit 1, the config issue paths logged, nothing on stdout', async () => {
  const cfg = fixture('config', 'invalid.yaml');
  const r = await runClaw(['run', '--config', cfg], { cwd: NEUTRAL_CWD });
  assert.is(r.code, 1);
  assert.is(r.stdout, '');
  const errs = stderrRecords(r.stderr).filter((x) => x.level === 'error');
  assert.equal(errs.map((e) => e.path).sort(), ['bogus', 'heartbeat.interval_ms']);
  for (const e of errs) {
    assert.is(e.msg, 'runtime configuration invalid');
    assert.is(e.file, cfg);
  }
});

// ------------------------------------------------------------------ CLI

test('claw --version, --help, run --help, validate --help: exit 0 with the text on stdout', async () => {
  const [version, help, runHelp, validateHelp, h] = await Promise.all([
    runClaw(['--version']),
    runClaw(['--help']),
    runClaw(['run', '--help']),
    runClaw(['validate', '--help']),
    runClaw(['-h']),
  ]);
  assert.is(version.code, 0);
  assert.is(version.stdout, `claw-edge ${PKG_VERSION} (CKP 0.3.0, 0.2.0)\n`);
  assert.is(version.stderr, '');
  for (const r of [help, runHelp, validateHelp, h]) {
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stderr, '');
  }
  assert.ok(help.stdout.startsWith('claw — '), help.stdout);
  assert.ok(help.stdout.includes('run [manifest]') && help.stdout.includes('validate <file>'));
  assert.is(h.stdout, help.stdout);
  assert.ok(runHelp.stdout.startsWith('Usage: claw run [manifest] [--config FILE]'), runHelp.stdout);
  assert.ok(validateHelp.stdout.startsWith('Usage: claw validate <file> [--json] [--config FILE]'), validateHelp.stdout);
});

test('usage errors exit 2 with nothing on stdout: claw bogus, claw validate (no file), claw, unknown options', async () => {
  const cases = [['bogus'], ['validate'], [], ['run', '--bogus'], ['validate', 'a.yaml', 'b.yaml'], ['run', 'a.yaml', 'b.yaml'], ['run', '--log-level', 'loud'], ['run', '--config']];
  const results = await Promise.all(cases.map((a) => runClaw(a, { cwd: NEUTRAL_CWD })));
  for (const [i, r] of results.entries()) {
    assert.is(r.code, 2, `claw ${cases[i].join(' ')}: exit ${r.code} ${r.stderr}`);
    if (cases[i].length > 0) assert.is(r.stdout, '', `claw ${cases[i].join(' ')} wrote to stdout`);
    if (cases[i].length > 0) assert.ok(r.stderr.length > 0, `claw ${cases[i].join(' ')} explained nothing`);
    else assert.ok(r.stdout.startsWith('claw — '), 'bare `claw` prints the help');
  }
  assert.ok(results[0].stderr.includes('unknown command "bogus"'));
  assert.ok(results[1].stderr.includes('expected exactly one file'));
});

// "Shutdown while a slow request is in flight" is not testable over the wire at Level 1 (no slow method
// exists until tools arrive); the kernel unit tests cover the drain/timeout logic.

test.run();
