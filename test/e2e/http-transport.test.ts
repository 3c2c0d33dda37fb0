// The Level 1 behaviours the stdio suites check (vectors-l1, lifecycle, protocol), over the HTTP transport of the
// built dist/claw.mjs: one POST per message or batch, agent notifications on the SSE stream, /healthz, claw send.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { initParams, runClaw } from './helpers/claw-process.ts';
import { assertError, assertResult, assertCleanStreams, fixture, loadYaml, sleep, transitions, VERSIONS } from './helpers/e2e-util.ts';
import { openStream, request, rpc, startHttpClaw, type HttpClaw } from './helpers/http-claw.ts';

const CONFIG = `heartbeat: { interval_ms: 200 }
limits: { max_frame_bytes: 1024 }
transports:
  - listen: http://127.0.0.1:0/ckp
`;

async function withHttp(fn: (h: HttpClaw) => Promise<void>, config = CONFIG, opts: Parameters<typeof startHttpClaw>[1] = {}): Promise<void> {
  const h = await startHttpClaw(config, opts);
  try {
    await fn(h);
    assertCleanStreams(h.c);
  } finally {
    await h.stop();
  }
}

const req = (id: unknown, method: string, params?: unknown) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const initialize = (id: unknown = 1, over: Record<string, unknown> = {}) => req(id, 'claw.initialize', initParams(over));

test('http L1: before initialize, claw.status is -32600 with data.state INIT; initialize happy path; the session id header', async () => {
  await withHttp(async ({ url }) => {
    const s = await rpc(url, req(1, 'claw.status'));
    assert.is(s.status, 200);
    assertError(s.json, 1, -32600, { state: 'INIT' });
    const r = await rpc(url, initialize(2));
    assert.is(r.status, 200);
    assertResult(r.json, 2, { protocolVersion: '0.3.0', agentInfo: { name: 'test-bot', version: '0.0.0' }, conformanceLevel: 'level-1', capabilities: {} });
    assert.match(String(r.headers['claw-session-id']), /^[0-9a-f]{32}$/);
    assert.is(r.headers['content-type'], 'application/json');
  });
});

test('http L1: TV-L1-01/02/03/09 inline in claw.initialize (0.3.0 and 0.2.0): valid accepted, invalid -32602 with the issue paths, no session id', async () => {
  const vectors = [
    { file: 'tv-l1-01.yaml', paths: [] as string[] },
    { file: 'tv-l1-02.yaml', paths: ['spec.identity'] },
    { file: 'tv-l1-03.yaml', paths: ['spec.providers'] },
    { file: 'tv-l1-09.yaml', paths: ['spec.providers'] },
  ];
  await withHttp(async ({ url }) => {
    for (const v of VERSIONS) {
      for (const mv of vectors.filter((x) => x.paths.length > 0)) {
        const manifest = loadYaml(fixture(v.dir, mv.file));
        const r = await rpc(url, req(1, 'claw.initialize', initParams({ protocolVersion: v.proto, manifest })));
        assert.is(r.status, 200);
        assertError(r.json, 1, -32602);
        assert.equal([...new Set(r.json.error.data.issues.map((i: any) => i.path))].sort(), mv.paths);
        assert.is(r.headers['claw-session-id'], undefined);
      }
    }
    const manifest = loadYaml(fixture('v030', 'tv-l1-01.yaml'));
    const ok = await rpc(url, req(2, 'claw.initialize', initParams({ manifest })));
    assertResult(ok.json, 2, { protocolVersion: '0.3.0', agentInfo: { name: manifest.metadata.name, version: '0.0.0' }, conformanceLevel: 'level-1', capabilities: {} });
  });
});

test('http L1: version 9.0.0 → -32001 with data.supported, stays INIT, then a retry succeeds', async () => {
  await withHttp(async ({ url }) => {
    const r = await rpc(url, req(1, 'claw.initialize', { ...initParams(), protocolVersion: '9.0.0' }));
    assertError(r.json, 1, -32001, { supported: ['0.3.0', '0.2.0'] });
    assert.is(r.headers['claw-session-id'], undefined, 'no session id for a refused initialize');
    assertError((await rpc(url, req(2, 'claw.status', {}))).json, 2, -32600, { state: 'INIT' });
    assert.is((await rpc(url, initialize(3))).json.result.protocolVersion, '0.3.0');
  });
});

test('http L1: status READY with growing uptime; unknown method -32601; missing method -32600; malformed JSON -32700 (HTTP 400)', async () => {
  await withHttp(async ({ url }) => {
    await rpc(url, initialize());
    const a = (await rpc(url, req(2, 'claw.status', {}))).json;
    assert.equal(Object.keys(a.result).sort(), ['state', 'uptime_ms']);
    assert.is(a.result.state, 'READY');
    await sleep(120);
    const b = (await rpc(url, req(3, 'claw.status'))).json;
    assert.ok(b.result.uptime_ms - a.result.uptime_ms >= 100);
    assertError((await rpc(url, req(99, 'claw.nonexistent.method', {}))).json, 99, -32601);
    assertError((await rpc(url, { jsonrpc: '2.0', id: 50, params: {} })).json, 50, -32600);
    const bad = await rpc(url, '{"jsonrpc": "2.0", "id": 51, "method": "claw.status"');
    assert.is(bad.status, 400);
    assertError(bad.json, null, -32700);
    assert.is((await rpc(url, req(52, 'claw.status'))).json.result.state, 'READY');
    const notObject = await rpc(url, '42');
    assert.is(notObject.status, 400);
    assertError(notObject.json, null, -32600);
  });
});

test('http L1: ids are echoed exactly (string, 0, negative, float, null)', async () => {
  await withHttp(async ({ url }) => {
    await rpc(url, initialize('init'));
    for (const id of ['abc-é', 0, -7, 1.5, null]) assert.is((await rpc(url, req(id, 'claw.status'))).json.id, id);
  });
});

test('http L1: notifications get 202 and no body (claw.initialized, unknown, wrong state); the agent goes on', async () => {
  await withHttp(async ({ url }) => {
    for (const m of [{ jsonrpc: '2.0', method: 'claw.initialized' }, { jsonrpc: '2.0', method: 'claw.nope' }]) {
      const r = await rpc(url, m);
      assert.is(r.status, 202);
      assert.is(r.text, '');
    }
    await rpc(url, initialize());
    const n = await rpc(url, { jsonrpc: '2.0', method: 'claw.initialized' });
    assert.is(n.status, 202);
    assert.is((await rpc(url, req(2, 'claw.status'))).json.result.state, 'READY');
  });
});

test('http L1: batches: mixed → only the requests’ replies; notifications only → 202; [] → one -32600; initialize + status in one batch sees READY', async () => {
  await withHttp(async ({ url }) => {
    const both = await rpc(url, [initialize(1), req(2, 'claw.status')]);
    assert.is(both.status, 200);
    assert.equal(both.json.map((r: any) => r.id), [1, 2]);
    assert.is(both.json[1].result.state, 'READY');
    assert.ok(both.headers['claw-session-id'], 'the initialize inside a batch issues the session id');
    const mixed = await rpc(url, [req('a', 'claw.status'), { jsonrpc: '2.0', method: 'claw.initialized' }, req('b', 'claw.nope')]);
    assert.equal(mixed.json.map((r: any) => r.id), ['a', 'b']);
    assert.is(mixed.json[1].error.code, -32601);
    const notes = await rpc(url, [{ jsonrpc: '2.0', method: 'claw.initialized' }, { jsonrpc: '2.0', method: 'x' }]);
    assert.is(notes.status, 202);
    const empty = await rpc(url, '[]');
    assert.is(empty.status, 400);
    assertError(empty.json, null, -32600);
    const numbers = await rpc(url, '[1,2]');
    assert.equal(numbers.json.map((r: any) => [r.id, r.error.code]), [[null, -32600], [null, -32600]]);
  });
});

test('http: a batch over the 1,000-message cap is one -32600 even when it holds only notifications (not a 202 for work never run)', async () => {
  await withHttp(async ({ url }) => {
    const notes = Array.from({ length: 1001 }, () => ({ jsonrpc: '2.0', method: 'claw.initialized' }));
    const over = await rpc(url, notes);
    assert.is(over.status, 400);
    assertError(over.json, null, -32600);
    assert.match(over.json.error.message, /1001 messages.*1000/);
    assert.is((await rpc(url, notes.slice(0, 1000))).status, 202, 'at the cap: accepted');
  }, CONFIG.replace('max_frame_bytes: 1024', 'max_frame_bytes: 65536'));
});

test('http L1: a second claw.initialize while READY is refused (-32600, data.state READY) and issues no session id', async () => {
  await withHttp(async ({ url }) => {
    const first = await rpc(url, initialize(1));
    const second = await rpc(url, initialize(2));
    assertError(second.json, 2, -32600, { state: 'READY' });
    assert.is(second.headers['claw-session-id'], undefined);
    // The first client's session id is still the current one.
    const s = await rpc(url, req(3, 'claw.status'), { headers: { 'claw-session-id': String(first.headers['claw-session-id']) } });
    assert.is(s.status, 200);
  });
});

test('http L1: shutdown → {drained:true}, STOPPED; the session id is retired (404); a new initialize issues a new one', async () => {
  await withHttp(async ({ url, c }) => {
    const init = await rpc(url, initialize(1));
    const sid = String(init.headers['claw-session-id']);
    const h = { headers: { 'claw-session-id': sid } };
    assertResult((await rpc(url, req(3, 'claw.shutdown', { reason: 'test', timeout_ms: 5000 }), h)).json, 3, { drained: true });
    const stale = await rpc(url, req(4, 'claw.status'), h);
    assert.is(stale.status, 404);
    assert.is(stale.json.error.code, -32600);
    assert.is((await rpc(url, req(5, 'claw.status'))).json.result.state, 'STOPPED');
    assert.equal(transitions(c.stderr()), [
      ['INIT', 'STARTING'],
      ['STARTING', 'READY'],
      ['READY', 'STOPPING'],
      ['STOPPING', 'STOPPED'],
    ]);
    const again = await rpc(url, initialize(6));
    assert.is(again.json.result.protocolVersion, '0.3.0');
    assert.ok(again.headers['claw-session-id'] && again.headers['claw-session-id'] !== sid);
  });
});

test('http L1: oversize body (limits.max_frame_bytes 1024) → 413 with -32600 and data.limit; later requests flow', async () => {
  await withHttp(async ({ url }) => {
    await rpc(url, initialize());
    const big = await rpc(url, req(7, 'claw.status', { pad: 'x'.repeat(5000) }));
    assert.is(big.status, 413);
    assertError(big.json, null, -32600, { limit: 1024 });
    const exact = JSON.stringify(req(8, 'claw.status'));
    const padded = exact.slice(0, -1) + ' '.repeat(1024 - exact.length) + '}';
    assert.is(Buffer.byteLength(padded), 1024 + 0);
    assert.is((await rpc(url, padded)).status, 200, 'exactly max_frame_bytes is accepted');
    assert.is((await rpc(url, padded.slice(0, -1) + ' }')).status, 413, 'one byte more is refused');
  }, CONFIG.replace('heartbeat: { interval_ms: 200 }\n', ''));
});

test('http L1: not UTF-8 → 400 with -32700', async () => {
  await withHttp(async ({ url }) => {
    const r = await rpc(url, Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    assert.is(r.status, 400);
    assertError(r.json, null, -32700);
  });
});

test('http L1: depth bombs → -32600 with the request id (HTTP 200) or id null (400); the agent keeps serving', async () => {
  await withHttp(async ({ url }) => {
    await rpc(url, initialize());
    const n = 10_000;
    const a = await rpc(url, `{"jsonrpc":"2.0","id":77,"method":"claw.status","params":${'['.repeat(n)}${']'.repeat(n)}}`);
    assert.is(a.status, 200);
    assertError(a.json, 77, -32600);
    const b = await rpc(url, `${'['.repeat(n)}${']'.repeat(n)}`);
    assert.is(b.status, 400);
    assertError(b.json, null, -32600);
    const m = 1_000_000;
    // Past 16,384 levels the frame is refused unparsed: its id is not read (docs/protocol.md).
    assertError((await rpc(url, `{"jsonrpc":"2.0","id":78,"method":"claw.status","params":${'['.repeat(m)}${']'.repeat(m)}}`)).json, null, -32600);
    assert.is((await rpc(url, req(79, 'claw.status'))).json.result.state, 'READY');
  }, CONFIG.replace('limits: { max_frame_bytes: 1024 }\n', ''));
});

test('http L1: invalid envelopes → -32600 with the id echoed; peer responses → 202; invalid params → -32602', async () => {
  await withHttp(async ({ url }) => {
    await rpc(url, initialize());
    const cases: [unknown, string | number][] = [
      [{ jsonrpc: '1.0', id: 'v1', method: 'claw.status' }, 'v1'],
      [{ id: 'nover', method: 'claw.status' }, 'nover'],
      [{ jsonrpc: '2.0', id: 11, method: 5 }, 11],
      [{ jsonrpc: '2.0', id: 14, method: '' }, 14],
      [{ jsonrpc: '2.0', id: 15, method: 'claw.status', params: 'x' }, 15],
      [{ jsonrpc: '2.0', id: 18, method: 'claw.status', result: 1 }, 18],
    ];
    for (const [msg, id] of cases) {
      const r = await rpc(url, msg);
      assert.is(r.status, 200);
      assertError(r.json, id, -32600);
    }
    for (const m of [{ jsonrpc: '2.0', id: 900, result: { ok: true } }, { jsonrpc: '2.0', id: 901, error: { code: -32000, message: 'x' } }]) {
      const r = await rpc(url, m);
      assert.is(r.status, 202);
      assert.is(r.text, '');
    }
    const sd = await rpc(url, req('sd', 'claw.shutdown', { timeout_ms: -5 }));
    assertError(sd.json, 'sd', -32602);
    assert.ok(sd.json.error.data.issues.some((i: any) => i.path === 'timeout_ms'));
    assert.is((await rpc(url, req('st', 'claw.status'))).json.result.state, 'READY');
  });
});

test('http L1: heartbeats reach an SSE stream (shape, ~200 ms apart); a client resuming with Last-Event-ID gets what it missed, once', async () => {
  await withHttp(async ({ url }) => {
    const early = openStream(url);
    assert.is(await early.ready, 200);
    await sleep(450);
    assert.equal(early.events, [], 'no heartbeat before claw.initialize');
    await rpc(url, initialize());
    const deadline = Date.now() + 5000;
    while (early.events.length < 3 && Date.now() < deadline) await sleep(20);
    assert.ok(early.events.length >= 3, `heartbeats: ${early.events.length}`);
    const hb = early.events[0].data;
    assert.is(hb.jsonrpc, '2.0');
    assert.is(hb.method, 'claw.heartbeat');
    assert.not.ok('id' in hb);
    assert.is(hb.params.state, 'READY');
    const seqs = early.events.map((e) => Number(e.id!.split('-')[1]));
    seqs.forEach((s, i) => i > 0 && assert.is(s, seqs[i - 1] + 1));
    const lastSeen = early.events[1].id!;
    early.close();
    await sleep(500);
    const resumed = openStream(url, { 'last-event-id': lastSeen });
    await resumed.ready;
    await sleep(100);
    const got = resumed.events.map((e) => Number(e.id!.split('-')[1]));
    assert.ok(got.length >= 3, `replayed ${got.length}`);
    assert.is(got[0], Number(lastSeen.split('-')[1]) + 1, 'resumes right after the last event seen');
    assert.equal(got, [...new Set(got)], 'no event twice');
    resumed.close();
  });
});

test('http L1: heartbeats stop after shutdown (none on the stream)', async () => {
  await withHttp(async ({ url }) => {
    await rpc(url, initialize());
    await rpc(url, req(2, 'claw.shutdown', {}));
    const s = openStream(url);
    await s.ready;
    await sleep(300);
    const n = s.events.length;
    await sleep(500);
    assert.is(s.events.length, n, 'no new heartbeat after shutdown');
    s.close();
  });
});

test('http: /healthz: INIT before initialize, READY after, ?ready 503 then 200; GET only', async () => {
  await withHttp(async ({ url }) => {
    const health = url.replace(/\/ckp$/, '/healthz');
    const a = await request(health, { method: 'GET' });
    assert.is(a.status, 200);
    assert.equal(a.json, { state: 'INIT' });
    assert.is((await request(`${health}?ready`, { method: 'GET' })).status, 503);
    await rpc(url, initialize());
    const b = await request(health, { method: 'GET' });
    assert.is(b.json.state, 'READY');
    assert.ok(Number.isInteger(b.json.uptime_ms));
    assert.is((await request(`${health}?ready`, { method: 'GET' })).status, 200);
    assert.is((await request(health, { method: 'POST', body: '{}' })).status, 405);
  });
});

test('http: claw send http://… talks to the agent; an unreachable URL exits 4', async () => {
  await withHttp(async ({ url }) => {
    const init = await runClaw(['send', url, 'claw.initialize', JSON.stringify(initParams()), '--id', '1']);
    assert.is(init.code, 0, init.stderr);
    assert.is(JSON.parse(init.stdout).result.conformanceLevel, 'level-1');
    const st = await runClaw(['send', url, 'claw.status']);
    assert.is(st.code, 0, st.stderr);
    assert.is(JSON.parse(st.stdout).result.state, 'READY');
    const bad = await runClaw(['send', url, 'claw.nope', '--id', '5']);
    assert.is(bad.code, 1);
    assert.is(JSON.parse(bad.stdout).error.code, -32601);
    const note = await runClaw(['send', url, 'claw.initialized', '--notify']);
    assert.is(note.code, 0, note.stderr);
  });
  const gone = await runClaw(['send', 'http://127.0.0.1:1/ckp', 'claw.status', '--timeout', '2000']);
  assert.is(gone.code, 4, gone.stderr);
  assert.match(gone.stderr, /ECONNREFUSED/);
});

test('http: --listen on the command line works without a config file entry; stdin EOF keeps it serving', async () => {
  const h = await startHttpClaw('heartbeat: { interval_ms: 60000 }\n', { args: ['--listen', 'http://127.0.0.1:0'] });
  try {
    assert.match(h.url, /^http:\/\/127\.0\.0\.1:\d+\/ckp$/);
    h.c.child.stdin.end();
    await sleep(200);
    assert.is((await rpc(h.url, initialize())).json.result.protocolVersion, '0.3.0');
    h.c.child.kill('SIGTERM');
    const { code } = await h.c.exited;
    assert.is(code, 0);
  } finally {
    await h.stop();
  }
});

test.run();
