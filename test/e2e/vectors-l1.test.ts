// CKP Level 1 conformance vectors TV-L1-01..13, in their 0.3.0 form (clawkernel-test-vectors-0.3.0.md)
// and their 0.2.0 twins (ckp-test-vectors-0.2.0.md), run against the built dist/claw.mjs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runClaw, initParams } from './helpers/claw-process.ts';
import {
  VERSIONS,
  fixture,
  loadYaml,
  withClaw,
  initialize,
  assertError,
  assertResult,
  assertNoReplySince,
  waitAfter,
  sleep,
  transitions,
  stderrRecords,
  NEUTRAL_CWD,
} from './helpers/e2e-util.ts';

const HEARTBEAT_CFG = fixture('config', 'heartbeat-200.yaml');

// ---------------------------------------------------------------------------------------------
// TV-L1-01 / 02 / 03 / 09: manifests, through `claw validate` and through claw.initialize.

const MANIFEST_VECTORS = [
  { tv: 'TV-L1-01', file: 'tv-l1-01.yaml', valid: true, paths: [] as string[] },
  { tv: 'TV-L1-02', file: 'tv-l1-02.yaml', valid: false, paths: ['spec.identity'] },
  { tv: 'TV-L1-03', file: 'tv-l1-03.yaml', valid: false, paths: ['spec.providers'] },
  { tv: 'TV-L1-09', file: 'tv-l1-09.yaml', valid: false, paths: ['spec.providers'] },
];

for (const v of VERSIONS) {
  for (const mv of MANIFEST_VECTORS) {
    test(`${mv.tv} [${v.proto}] claw validate: exit ${mv.valid ? 0 : 1}${mv.valid ? '' : `, issue at ${mv.paths.join(', ')}`}`, async () => {
      const file = fixture(v.dir, mv.file);
      const [human, json] = await Promise.all([runClaw(['validate', file], { cwd: NEUTRAL_CWD }), runClaw(['validate', '--json', file], { cwd: NEUTRAL_CWD })]);

      // Human output: nothing on stdout, one `file:line:col  path  message` line per issue on stderr.
      assert.is(human.code, mv.valid ? 0 : 1, human.stderr);
      assert.is(human.stdout, '');
      const lines = human.stderr.split('\n').filter(Boolean);
      if (mv.valid) {
        assert.equal(lines, [`${file}: valid Claw`]);
      } else {
        const issueLines = lines.slice(0, -1);
        assert.ok(issueLines.length >= 1, human.stderr);
        for (const l of issueLines) {
          const m = /^(.+):(\d+):(\d+) {2}(\S+) {2}(.+)$/.exec(l);
          assert.ok(m, `not an issue line: ${l}`);
          assert.is(m![1], file);
          assert.ok(mv.paths.includes(m![4]), `unexpected issue path in: ${l}`);
        }
        for (const p of mv.paths) assert.ok(issueLines.some((l) => l.includes(`  ${p}  `)), `no issue at ${p}: ${human.stderr}`);
        assert.is(lines.at(-1), `${issueLines.length} issue${issueLines.length === 1 ? '' : 's'}`);
      }

      // --json: one JSON document on stdout with the same verdict.
      assert.is(json.code, mv.valid ? 0 : 1, json.stderr);
      assert.is(json.stderr, '');
      const out = JSON.parse(json.stdout);
      assert.is(out.valid, mv.valid);
      assert.is(out.file, file);
      assert.is(out.kind, 'Claw');
      if (mv.valid) {
        assert.equal(out.issues, []);
      } else {
        assert.ok(out.issues.length >= 1);
        assert.equal([...new Set(out.issues.map((i: any) => i.path))].sort(), [...mv.paths].sort());
        for (const i of out.issues) {
          assert.is(i.file, file);
          assert.type(i.message, 'string');
          assert.type(i.rule, 'string');
          assert.ok(Number.isInteger(i.pos?.line) && i.pos.line >= 1, JSON.stringify(i));
          assert.ok(Number.isInteger(i.pos?.col) && i.pos.col >= 1, JSON.stringify(i));
        }
        if (mv.tv === 'TV-L1-02') {
          // `spec:` is on line 5 of the vector, where identity is missing.
          assert.equal(out.issues, [
            { file, pos: { line: 5, col: 1 }, path: 'spec.identity', message: 'missing required field "identity"', section: '§6', rule: 'schema' },
          ]);
        }
      }
    });

    test(`${mv.tv} [${v.proto}] inline in claw.initialize: ${mv.valid ? 'accepted' : `-32602 with issue ${mv.paths.join(', ')}`}`, async () => {
      const manifest = loadYaml(fixture(v.dir, mv.file));
      await withClaw(['run'], async (c) => {
        const r = await c.request('claw.initialize', initParams({ protocolVersion: v.proto, manifest }), 1);
        if (mv.valid) {
          assertResult(r, 1, {
            protocolVersion: v.proto,
            agentInfo: { name: manifest.metadata.name, version: '0.0.0' },
            conformanceLevel: 'level-1',
            capabilities: {},
          });
          return;
        }
        assertError(r, 1, -32602);
        const issues = r.error.data?.issues;
        assert.ok(Array.isArray(issues) && issues.length >= 1, JSON.stringify(r));
        assert.equal([...new Set(issues.map((i: any) => i.path))].sort(), [...mv.paths].sort());
        for (const i of issues) {
          assert.type(i.message, 'string');
          assert.type(i.rule, 'string');
        }
        // A refused manifest leaves the agent in INIT: a valid initialize still works afterwards.
        const s = await c.request('claw.status', {}, 2);
        assertError(s, 2, -32600, { state: 'INIT' });
        const ok = await c.request('claw.initialize', initParams({ protocolVersion: v.proto }), 3);
        assert.is(ok.result?.conformanceLevel, 'level-1', JSON.stringify(ok));
      });
    });
  }
}

// ---------------------------------------------------------------------------------------------
// TV-L1-04 .. TV-L1-13 over the wire.

for (const v of VERSIONS) {
  const P = (over: Record<string, unknown> = {}) => initParams({ protocolVersion: v.proto, ...over });

  test(`TV-L1-04 [${v.proto}] initialize happy path: exact result`, async () => {
    await withClaw(['run'], async (c) => {
      const r = await c.request('claw.initialize', P(), 1);
      // metadata.version is absent in the vector: the runtime reports "0.0.0" (initialize.ts).
      assertResult(r, 1, {
        protocolVersion: v.proto,
        agentInfo: { name: 'test-bot', version: '0.0.0' },
        conformanceLevel: 'level-1',
        // capabilities {} is unrestricted; a Level 1 runtime supports no capability group.
        capabilities: {},
      });
    });
  });

  test(`TV-L1-04 [${v.proto}] agentInfo.version comes from metadata.version; restricted capabilities intersect to {}`, async () => {
    await withClaw(['run'], async (c) => {
      const base = initParams().manifest as any;
      const manifest = { ...base, metadata: { name: 'test-bot', version: '1.2.3' } };
      const r = await c.request('claw.initialize', P({ manifest, capabilities: { tools: {}, memory: {} } }), 'init');
      assertResult(r, 'init', {
        protocolVersion: v.proto,
        agentInfo: { name: 'test-bot', version: '1.2.3' },
        conformanceLevel: 'level-1',
        capabilities: {},
      });
    });
  });

  test(`TV-L1-05 [${v.proto}] version 9.0.0: -32001 with data.supported, agent stays in INIT`, async () => {
    await withClaw(['run'], async (c) => {
      const r = await c.request(
        'claw.initialize',
        {
          protocolVersion: '9.0.0',
          clientInfo: { name: 'future-operator', version: '1.0.0' },
          manifest: { kind: 'Claw', metadata: { name: 'test' }, spec: {} },
          capabilities: {},
        },
        1,
      );
      assertError(r, 1, -32001, { supported: ['0.3.0', '0.2.0'] });
      assert.is(r.error.message, 'Protocol version not supported');
      const s = await c.request('claw.status', {}, 2);
      assertError(s, 2, -32600, { state: 'INIT' });
      // The operator may retry with a version we speak.
      const ok = await c.request('claw.initialize', P(), 3);
      assert.is(ok.result?.protocolVersion, v.proto, JSON.stringify(ok));
    });
  });

  test(`TV-L1-06 [${v.proto}] status: READY, uptime_ms a non-negative integer that grows`, async () => {
    await withClaw(['run'], async (c) => {
      await initialize(c, { protocolVersion: v.proto });
      const a = await c.request('claw.status', {}, 2);
      assert.is(a.id, 2);
      assert.equal(Object.keys(a.result).sort(), ['state', 'uptime_ms']);
      assert.is(a.result.state, 'READY');
      assert.ok(Number.isInteger(a.result.uptime_ms) && a.result.uptime_ms >= 0, JSON.stringify(a));
      await sleep(120);
      const b = await c.request('claw.status', {}, 3);
      assert.is(b.result.state, 'READY');
      assert.ok(Number.isInteger(b.result.uptime_ms), JSON.stringify(b));
      assert.ok(b.result.uptime_ms - a.result.uptime_ms >= 100, `uptime did not grow: ${a.result.uptime_ms} → ${b.result.uptime_ms}`);
      // Params omitted is the same as {}.
      const c2 = await c.request('claw.status', undefined, 4);
      assert.is(c2.result.state, 'READY');
    });
  });

  test(`TV-L1-07 [${v.proto}] shutdown: {drained:true}, STOPPING then STOPPED`, async () => {
    await withClaw(['run'], async (c) => {
      await initialize(c, { protocolVersion: v.proto });
      const r = await c.request('claw.shutdown', { reason: 'test-shutdown', timeout_ms: 5000 }, 3);
      assertResult(r, 3, { drained: true });
      const s = await c.request('claw.status', {}, 4);
      assert.is(s.result?.state, 'STOPPED', JSON.stringify(s));
      assert.equal(transitions(c.stderr()), [
        ['INIT', 'STARTING'],
        ['STARTING', 'READY'],
        ['READY', 'STOPPING'],
        ['STOPPING', 'STOPPED'],
      ]);
      // A second shutdown is harmless.
      assertResult(await c.request('claw.shutdown', {}, 5), 5, { drained: true });
      assert.is(await c.end(), 0);
    });
  });

  test(`TV-L1-08 [${v.proto}] claw.initialized notification gets no reply at all`, async () => {
    await withClaw(['run'], async (c) => {
      await initialize(c, { protocolVersion: v.proto });
      const mark = c.messages.length;
      c.send({ jsonrpc: '2.0', method: 'claw.initialized' });
      const s = await assertNoReplySince(c, mark, 'after-initialized');
      assert.is(s.result.state, 'READY');
    });
  });

  test(`TV-L1-10 [${v.proto}] unknown method: -32601 id 99`, async () => {
    await withClaw(['run'], async (c) => {
      await initialize(c, { protocolVersion: v.proto });
      assertError(await c.request('claw.nonexistent.method', {}, 99), 99, -32601);
    });
  });

  test(`TV-L1-11 [${v.proto}] missing method: -32600 id 50`, async () => {
    await withClaw(['run'], async (c) => {
      await initialize(c, { protocolVersion: v.proto });
      const mark = c.messages.length;
      c.send({ jsonrpc: '2.0', id: 50, params: {} });
      assertError(await waitAfter(c, mark, (m) => m.id === 50), 50, -32600);
    });
  });

  test(`TV-L1-12 [${v.proto}] malformed JSON: -32700 id null`, async () => {
    await withClaw(['run'], async (c) => {
      await initialize(c, { protocolVersion: v.proto });
      const mark = c.messages.length;
      c.sendRaw('{"jsonrpc": "2.0", "id": 51, "method": "claw.status"\n');
      const r = await waitAfter(c, mark, () => true);
      assertError(r, null, -32700);
      // The connection keeps serving.
      assert.is((await c.request('claw.status', {}, 52)).result?.state, 'READY');
      assert.is(c.messages.length, mark + 2);
    });
  });

  test(`TV-L1-13 [${v.proto}] heartbeat (runtime config interval_ms 200): shape, timing, none before initialize or after shutdown`, async () => {
    await withClaw(['run', '--config', HEARTBEAT_CFG], async (c) => {
      const heartbeats = () => c.messages.filter((m) => m.method === 'claw.heartbeat').map((msg) => ({ msg }));
      // Nothing before initialize, even after more than two intervals.
      await sleep(500);
      assert.equal(c.messages, [], 'no heartbeat before claw.initialize');

      const r = await c.request('claw.initialize', P(), 1);
      const t0 = Date.now();
      assert.ok(r.result, JSON.stringify(r));
      while (heartbeats().length < 5 && Date.now() - t0 < 4000) await sleep(20);
      const beats = heartbeats();
      assert.ok(beats.length >= 5, `got ${beats.length} heartbeats in ${Date.now() - t0} ms`);

      const initIdx = c.messages.indexOf(r);
      for (const { msg } of beats) {
        assert.ok(c.messages.indexOf(msg) > initIdx, 'heartbeat before the initialize reply');
        assert.equal(Object.keys(msg).sort(), ['jsonrpc', 'method', 'params']);
        assert.not.ok('id' in msg);
        assert.is(msg.jsonrpc, '2.0');
        assert.equal(Object.keys(msg.params).sort(), ['state', 'timestamp', 'uptime_ms']);
        assert.is(msg.params.state, 'READY');
        assert.ok(Number.isInteger(msg.params.uptime_ms) && msg.params.uptime_ms >= 0, JSON.stringify(msg));
        assert.match(msg.params.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/);
        const ts = Date.parse(msg.params.timestamp);
        assert.ok(Math.abs(ts - Date.now()) < 60_000, `timestamp ${msg.params.timestamp} is not now`);
      }
      // First beat one interval after READY (measured on the agent's own clocks: uptime_ms, and the
      // timestamp against the READY transition logged on stderr); then roughly every 200 ms.
      assert.ok(beats[0].msg.params.uptime_ms >= 150, `first heartbeat uptime ${beats[0].msg.params.uptime_ms}`);
      const ready = stderrRecords(c.stderr()).find((x) => x.msg === 'lifecycle.transition' && x.to === 'READY');
      const sinceReady = Date.parse(beats[0].msg.params.timestamp) - Date.parse(ready.ts);
      assert.ok(sinceReady >= 150, `first heartbeat ${sinceReady} ms after READY`);
      const gaps = beats.slice(1, 5).map((b, i) => b.msg.params.uptime_ms - beats[i].msg.params.uptime_ms);
      for (const g of gaps) assert.ok(g >= 100 && g <= 1000, `uptime gaps between heartbeats: ${gaps}`);
      const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
      assert.ok(mean >= 150 && mean <= 400, `mean heartbeat gap ${mean} ms (gaps ${gaps})`);
      const tsGap = Date.parse(beats[4].msg.params.timestamp) - Date.parse(beats[0].msg.params.timestamp);
      assert.ok(tsGap >= 500 && tsGap <= 2500, `timestamps of beats 1..5 span ${tsGap} ms`);

      // None once shutdown began.
      const sd = await c.request('claw.shutdown', {}, 2);
      assertResult(sd, 2, { drained: true });
      const after = c.messages.indexOf(sd);
      await sleep(600);
      const late = c.messages.slice(after).filter((m) => m.method === 'claw.heartbeat');
      assert.equal(late, [], 'heartbeat after claw.shutdown');
      for (const m of c.messages) if (m.method === 'claw.heartbeat') assert.is(m.params.state, 'READY');
    });
  });
}

test('TV-L1-13 heartbeat interval from metadata.annotations.heartbeat_interval_ms when no runtime config sets it', async () => {
  await withClaw(['run', fixture('manifests', 'heartbeat-annotated.yaml')], async (c) => {
    const r = await c.request('claw.initialize', initParams(), 1);
    const t0 = Date.now();
    assert.is(r.result?.agentInfo?.name, 'annotated-agent', JSON.stringify(r));
    const b1 = await c.waitFor((m) => m.method === 'claw.heartbeat', 2000);
    const b3 = await c.waitFor((m) => m.method === 'claw.heartbeat' && m.params.uptime_ms >= 400, 2000);
    assert.ok(Date.now() - t0 < 1500, 'three heartbeats at 150 ms took too long');
    assert.ok(b1.params.uptime_ms >= 100 && b1.params.uptime_ms < 1000, JSON.stringify(b1));
    assert.ok(b3.params.uptime_ms < 1500, JSON.stringify(b3));
  });
});

test('TV-L1-13 claw.runtime.yaml beside the manifest overrides the manifest annotation', async () => {
  // beside/claw.yaml asks for 60 s; beside/claw.runtime.yaml says 200 ms and wins.
  await withClaw(['run', fixture('beside', 'claw.yaml')], async (c) => {
    const r = await c.request('claw.initialize', initParams(), 1);
    assertResult(r, 1, { protocolVersion: '0.3.0', agentInfo: { name: 'beside-agent', version: '0.5.0' }, conformanceLevel: 'level-1', capabilities: {} });
    const b = await c.waitFor((m) => m.method === 'claw.heartbeat', 1500);
    assert.is(b.params.state, 'READY');
  });
});

test('TV-L1-13 without configuration no heartbeat comes within the first second (default 30 s)', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    await sleep(800);
    assert.equal(
      c.messages.filter((m) => m.method === 'claw.heartbeat'),
      [],
    );
  });
});

// Version negotiation (spec §9.3.1: the answer is <= the requested version; documented choices in version.ts).
const NEGOTIATION: [string, string | null][] = [
  ['0.4.0', '0.3.0'],
  ['0.3.7', '0.3.0'],
  ['0.2.9', '0.2.0'],
  ['0.3.0-rc.1', '0.2.0'],
  ['0.1.0', null],
  ['1.0.0', null],
  ['0.2.0-beta', null],
];

test('version negotiation: highest supported <= requested, otherwise -32001 with data.supported', async () => {
  await Promise.all(
    NEGOTIATION.map(([req, want]) =>
      withClaw(['run'], async (c) => {
        const r = await c.request('claw.initialize', initParams({ protocolVersion: req }), req);
        if (want === null) assertError(r, req, -32001, { supported: ['0.3.0', '0.2.0'] });
        else assert.is(r.result?.protocolVersion, want, `${req}: ${JSON.stringify(r)}`);
      }),
    ),
  );
});

test('claw.initialize with a non-semver protocolVersion or missing fields: -32602', async () => {
  await withClaw(['run'], async (c) => {
    assertError(await c.request('claw.initialize', initParams({ protocolVersion: 'latest' }), 1), 1, -32602);
    const { clientInfo: _drop, ...noClient } = initParams() as any;
    const r = await c.request('claw.initialize', noClient, 2);
    assertError(r, 2, -32602);
    assert.ok(r.error.data.issues.some((i: any) => i.path === 'clientInfo'), JSON.stringify(r));
    const { capabilities: _c, ...noCaps } = initParams() as any;
    assertError(await c.request('claw.initialize', noCaps, 3), 3, -32602);
    assertError(await c.request('claw.initialize', initParams({ manifest: 42 }), 4), 4, -32602);
    // Still INIT.
    assertError(await c.request('claw.status', {}, 5), 5, -32600, { state: 'INIT' });
  });
});

test.run();
