// The A2A client (src/a2a/client) against an agent built from the official SDK's server classes
// (a2a-client-sdk-server.ts), in its A2A 1.0 and 0.3 dialects: card resolution, send + polling, send +
// SSE, cancel on abort and on the deadline, bearer auth, the network guard's refusals, and the caps on
// what a misbehaving agent's endless artifact updates may make the client hold.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { A2aClient, cardUrlOf, DEFAULT_MAX_RESULT_BYTES, fetchCard } from '../../src/a2a/client/client.ts';
import { A2aClientError } from '../../src/a2a/client/errors.ts';
import { guardedNet, type A2aNet } from '../../src/a2a/client/net.ts';
import { NetworkDenied } from '../../src/net/guarded-fetch.ts';
import { parseCard, pickEndpoint } from '../../src/a2a/client/card.ts';
import { startSdkServer, type SdkServer, type SdkServerOptions } from './a2a-client-sdk-server.ts';

// Loopback is refused by the SSRF guard unless lifted: the tests' servers all live there.
const net = guardedNet({ mode: 'allow-all' }, { allowRanges: ['loopback'] });

async function withServer(o: SdkServerOptions, fn: (s: SdkServer) => Promise<void>): Promise<void> {
  const s = await startSdkServer(o);
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}

const rpcMethods = (s: SdkServer) => s.seen.filter((r) => r.method === 'POST').map((r) => r.body?.method);
const versions = (s: SdkServer) => s.seen.filter((r) => r.method === 'POST').map((r) => r.headers['a2a-version']);

async function rejects(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  assert.unreachable('expected a rejection');
}

test('the wall clock stepped a year forward during a send (NTP on a board without an RTC): the polling send still completes', () =>
  withServer({ delayMs: 400 }, async (s) => {
    const client = await A2aClient.open(s.cardUrl, { net });
    const real = Date.now;
    const step = setTimeout(() => (Date.now = () => real() + 365 * 86_400_000), 100);
    try {
      const r = await client.send('hello there', { pollInitialMs: 50, timeoutMs: 5000 });
      assert.is(r.state, 'completed');
    } finally {
      clearTimeout(step);
      Date.now = real;
    }
  }));

test('cardUrlOf: a base URL gets the well-known card path; a .json URL is kept', () => {
  assert.is(cardUrlOf('http://127.0.0.1:8080'), 'http://127.0.0.1:8080/.well-known/agent-card.json');
  assert.is(cardUrlOf('http://h/agents/x/'), 'http://h/agents/x/.well-known/agent-card.json');
  assert.is(cardUrlOf('https://h/card.json'), 'https://h/card.json');
  assert.instance(rejects(Promise.resolve().then(() => cardUrlOf('file:///etc/passwd'))), Promise);
});

for (const mode of [{ name: '1.0', only03: false }, { name: '0.3', only03: true }]) {
  test(`A2A ${mode.name}: card resolved, interface picked, send + polling GetTask to completion`, () =>
    withServer({ only03: mode.only03, delayMs: 400 }, async (s) => {
      const client = await A2aClient.open(s.cardUrl, { net });
      assert.is(client.card.name, 'sdk-echo');
      assert.equal(client.endpoint, { url: `${s.url}/rpc`, version: mode.name });
      const r = await client.send('hello there', { pollInitialMs: 50 });
      assert.is(r.state, 'completed');
      assert.is(r.text, 'echo: hello there');
      assert.ok(r.taskId);
      const m = rpcMethods(s);
      assert.is(m[0], mode.name === '1.0' ? 'SendMessage' : 'message/send');
      assert.ok(m.slice(1).length >= 1, 'followed by polling');
      assert.ok(m.slice(1).every((x) => x === (mode.name === '1.0' ? 'GetTask' : 'tasks/get')));
      assert.ok(versions(s).every((v) => v === mode.name), 'A2A-Version header on every call');
    }));

  test(`A2A ${mode.name}: streaming card → SSE to completion, no polling`, () =>
    withServer({ only03: mode.only03, streaming: true, delayMs: 100 }, async (s) => {
      const client = await A2aClient.open(s.cardUrl, { net });
      const r = await client.send('stream me');
      assert.is(r.state, 'completed');
      assert.is(r.text, 'echo: stream me');
      assert.equal(rpcMethods(s), [mode.name === '1.0' ? 'SendStreamingMessage' : 'message/stream']);
    }));

  for (const stream of [false, true]) {
    test(`A2A ${mode.name}: abort (${stream ? 'streaming' : 'polling'}) sends CancelTask for the running task`, () =>
      withServer({ only03: mode.only03, streaming: stream }, async (s) => {
        const client = await A2aClient.open(s.cardUrl, { net });
        const ctl = new AbortController();
        setTimeout(() => ctl.abort(), 300);
        const e = await rejects(client.send('slow', { signal: ctl.signal, pollInitialMs: 50 }));
        assert.instance(e, A2aClientError);
        assert.is(e.reason, 'aborted');
        assert.match(e.message, /canceled/);
        assert.is(s.canceled.length, 1, 'the agent was asked to cancel');
        assert.ok(rpcMethods(s).includes(mode.name === '1.0' ? 'CancelTask' : 'tasks/cancel'));
      }));
  }

  test(`A2A ${mode.name}: the deadline cancels the task too`, () =>
    withServer({ only03: mode.only03 }, async (s) => {
      const client = await A2aClient.open(s.cardUrl, { net });
      const e = await rejects(client.send('slow', { timeoutMs: 300, pollInitialMs: 50 }));
      assert.is(e.reason, 'timeout');
      assert.is(s.canceled.length, 1);
    }));
}

test('bearer auth: the token goes in Authorization; without it the peer refuses and the error says so', () =>
  withServer({ token: 's3cret-token-value' }, async (s) => {
    const good = await A2aClient.open(s.cardUrl, { net, token: 's3cret-token-value' });
    const r = await good.send('hi', { pollInitialMs: 50 });
    assert.is(r.text, 'echo: hi');
    const posts = s.seen.filter((x) => x.method === 'POST');
    assert.ok(posts.every((x) => x.headers.authorization === 'Bearer s3cret-token-value'));
    assert.is(s.seen.find((x) => x.method === 'GET')?.headers.authorization, undefined, 'the public card is read without credentials');
    const bad = await A2aClient.open(s.cardUrl, { net, token: 'wrong-token' });
    const e = await rejects(bad.send('hi'));
    assert.is(e.reason, 'auth');
    assert.not.match(e.message, /wrong-token|s3cret/);
  }));

test('credentials are not sent to an endpoint on another origin than the card', async () => {
  const card = { name: 'x', supportedInterfaces: [{ url: 'http://127.0.0.2:9/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] };
  const { parseCard } = await import('../../src/a2a/client/card.ts');
  const e = await rejects(Promise.resolve().then(() => new A2aClient(parseCard(card, 'http://127.0.0.1:1/.well-known/agent-card.json'), 'http://127.0.0.1:1/.well-known/agent-card.json', { net, token: 't0ken' })));
  assert.is(e.reason, 'auth');
  assert.not.match(e.message, /t0ken/);
});

test('network guard: loopback refused unless lifted, a host outside the allowlist refused; no request made', () =>
  withServer({}, async (s) => {
    const ssrf = await rejects(fetchCard(guardedNet({ mode: 'allow-all' }), s.cardUrl));
    assert.instance(ssrf, NetworkDenied);
    assert.is(ssrf.reason, 'ssrf-blocked');
    const listed = await rejects(fetchCard(guardedNet({ mode: 'allowlist', allowed_hosts: ['agents.example'] }, { allowRanges: ['loopback'] }), s.cardUrl));
    assert.is(listed.reason, 'host-not-allowed');
    const denied = await rejects(fetchCard(guardedNet({ mode: 'deny' }, { allowRanges: ['loopback'] }), s.cardUrl));
    assert.is(denied.reason, 'mode-deny');
    assert.is(s.seen.length, 0, 'nothing reached the peer');
  }));

test('a JSON-RPC error is typed, with the code; an unknown task on GetTask is -32001', () =>
  withServer({}, async (s) => {
    const client = await A2aClient.open(s.cardUrl, { net });
    const e = await rejects(client.cancel('no-such-task'));
    assert.is(e.reason, 'rpc');
    assert.is(e.rpcCode, -32001);
  }));

test('a peer that does not stream after all (-32004 to SendStreamingMessage): the client polls instead', () =>
  withServer({ streaming: false }, async (s) => {
    const client = await A2aClient.open(s.cardUrl, { net });
    const r = await client.send('fallback', { stream: true, pollInitialMs: 50 });
    assert.is(r.text, 'echo: fallback');
    const m = rpcMethods(s);
    assert.is(m[0], 'SendStreamingMessage');
    assert.is(m[1], 'SendMessage');
  }));

test('parseCard: a pure 0.3 card (url, preferredTransport, additionalInterfaces); no JSON-RPC interface → no-interface', async () => {
  const c03 = parseCard({ name: 'old', url: '/rpc', preferredTransport: 'GRPC', protocolVersion: '0.3.0', additionalInterfaces: [{ url: 'https://h/jsonrpc', transport: 'JSONRPC' }] }, 'https://h/.well-known/agent-card.json');
  assert.equal(c03.interfaces, [
    { url: 'https://h/rpc', binding: 'GRPC', version: '0.3.0' },
    { url: 'https://h/jsonrpc', binding: 'JSONRPC', version: '0.3.0' },
  ]);
  assert.equal(pickEndpoint(c03, 'x'), { url: 'https://h/jsonrpc', version: '0.3' });
  const grpc = parseCard({ name: 'g', supportedInterfaces: [{ url: 'https://h/g', protocolBinding: 'GRPC', protocolVersion: '1.0' }] }, 'https://h/c.json');
  const e = await rejects(Promise.resolve().then(() => pickEndpoint(grpc, 'https://h/c.json')));
  assert.is(e.reason, 'no-interface');
  assert.match(e.message, /offers: GRPC 1\.0/);
  for (const bad of [null, [], { description: 'no name' }, { name: 'x' }]) {
    assert.is((await rejects(Promise.resolve().then(() => parseCard(bad, 'u')))).reason, 'card');
  }
});

/** The guard's net, counting the bytes the client read off streamed bodies. */
function countingNet(): { net: A2aNet; read: () => number } {
  let n = 0;
  const request: A2aNet['request'] = async (url, init) => {
    const r = await net.request(url, init);
    const body = r.body;
    const counted = {
      async *[Symbol.asyncIterator]() {
        for await (const c of body) {
          n += (c as Buffer).length;
          yield c;
        }
      },
      destroy: () => body.destroy(),
    };
    return { ...r, body: counted as unknown as typeof body };
  };
  return { net: { fetch: net.fetch, request }, read: () => n };
}

/** The flood stopped before its end: the agent's executor saw the cancel. */
async function floodStopped(s: SdkServer, events: number): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    const before = s.flooded();
    await new Promise((r) => setTimeout(r, 100));
    if (s.flooded() === before) return before < events;
  }
  return false;
}

for (const mode of [{ name: '1.0', only03: false }, { name: '0.3', only03: true }]) {
  // 4 MiB of appends: four times the default cap.
  const flood = { mode: 'append' as const, partBytes: 64 * 1024, events: 64 };
  test(`A2A ${mode.name}: appends to one artifact past the cap → limit error (max_result_bytes), task canceled, reading stopped`, () =>
    withServer({ only03: mode.only03, streaming: true, flood }, async (s) => {
      const c = countingNet();
      const client = await A2aClient.open(s.cardUrl, { net: c.net });
      const t0 = Date.now();
      const e = await rejects(client.send('flood', { timeoutMs: 15_000 }));
      assert.instance(e, A2aClientError);
      assert.is(e.reason, 'limit', e.message);
      assert.is(e.limit, 'max_result_bytes');
      assert.match(e.message, /max_result_bytes/);
      assert.ok(Date.now() - t0 < 10_000, `failed after ${Date.now() - t0} ms, not at the cap`);
      // What the client read is the cap plus what was in flight, not the endless stream.
      assert.ok(c.read() < DEFAULT_MAX_RESULT_BYTES + 512 * 1024, `read ${c.read()} bytes`);
      assert.is(s.canceled.length, 1, 'the agent was asked to cancel');
      assert.ok(await floodStopped(s, flood.events), 'the agent stopped sending');
    }));
}

test('new artifacts past a configured max_artifacts → limit error, task canceled', () =>
  withServer({ streaming: true, flood: { mode: 'artifacts', partBytes: 10, events: 500 } }, async (s) => {
    const client = await A2aClient.open(s.cardUrl, { net });
    const e = await rejects(client.send('flood', { timeoutMs: 15_000, maxArtifacts: 20 }));
    assert.is(e.reason, 'limit', e.message);
    assert.is(e.limit, 'max_artifacts');
    assert.match(e.message, /more than 20 artifacts/);
    assert.is(s.canceled.length, 1);
    assert.ok(await floodStopped(s, 500));
  }));

test('polling: a task whose artifacts pass a configured max_result_bytes fails the same way', () =>
  withServer({ flood: { mode: 'append', partBytes: 1024, events: 200 } }, async (s) => {
    const client = await A2aClient.open(s.cardUrl, { net });
    const e = await rejects(client.send('flood', { timeoutMs: 15_000, maxResultBytes: 8 * 1024, pollInitialMs: 50, pollMaxMs: 100 }));
    assert.is(e.reason, 'limit', e.message);
    assert.is(e.limit, 'max_result_bytes');
    assert.is(s.canceled.length, 1);
    assert.ok(rpcMethods(s).includes('CancelTask'));
    assert.ok(await floodStopped(s, 200));
  }));

test('the size of an artifact: its text as UTF-8 and its raw content decoded', async () => {
  const { parseResult } = await import('../../src/a2a/client/wire.ts');
  const ev = parseResult({ artifactUpdate: { taskId: 't', artifact: { artifactId: 'a', parts: [{ text: 'h\u00e9' }, { raw: 'AAAA' }] }, append: true } }, '1.0');
  assert.equal(ev, { kind: 'artifact', taskId: 't', artifact: { artifactId: 'a', name: undefined, text: 'h\u00e9\n[binary content omitted]', bytes: 3 + 1 + 24 + 3 }, append: true });
});

test.run();
