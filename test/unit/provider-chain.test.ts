// Retries (runtime profile §5), timeouts, aborts and the fallback chain (spec §5.2), over real HTTP.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createChain } from '../../src/provider/chain.ts';
import { createProviderClient } from '../../src/provider/index.ts';
import { deadUrl, openaiJson, openaiSse, startFakeLlm, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { prov, rejection, setup, signal, user } from './provider-fixtures.ts';
import { systemClock } from '../../src/node/clock.ts';

let a: FakeLlm;
let b: FakeLlm;
test.before.each(async () => {
  a = await startFakeLlm();
  b = await startFakeLlm();
});
test.after.each(async () => {
  await a.close();
  await b.close();
});

const oa = (endpoint: string, over: Record<string, unknown> = {}) => ({ protocol: 'openai-compatible', endpoint, model: 'm', auth: { type: 'none' }, ...over });
const ok = (text: string) => ({ json: openaiJson({ content: text, usage: [1, 1] }) });

test('429 with Retry-After: waits exactly that long, then succeeds', async () => {
  a.queue({ status: 429, headers: { 'retry-after': '2' }, json: { error: { type: 'rate_limit_exceeded' } } }, ok('fine'));
  const { deps, sleeps } = setup([prov('p', oa(a.url))]);
  const r = await createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.is(r.text, 'fine');
  assert.equal(sleeps, [2000]);
  assert.is(a.requests.length, 2);
});

/** The system clock with its wall time pinned at `wall` (timers stay real). */
const wallAt = (wall: number) => ({
  now: () => wall,
  monotonic: () => systemClock.monotonic(),
  setTimeout: (fn: () => void, ms: number) => systemClock.setTimeout(fn, ms),
  setInterval: (fn: () => void, ms: number) => systemClock.setInterval(fn, ms),
});

/** A fetch answering 429 with `headers` once, then a completion. */
function rateLimitedOnce(headers: Record<string, string>) {
  let n = 0;
  return (async () =>
    n++ === 0
      ? new Response('{}', { status: 429, headers: { 'content-type': 'application/json', ...headers } })
      : new Response(JSON.stringify(openaiJson({ content: 'fine' })), { status: 200, headers: { 'content-type': 'application/json' } })) as unknown as typeof fetch;
}

test('an HTTP-date Retry-After on a board whose clock says 1970: the backoff applies, not a wait of decades (nor giving up)', async () => {
  const retryAfter = { 'retry-after': 'Sun, 22 Feb 2026 10:00:07 GMT' };
  const { deps, sleeps } = setup([prov('p', oa('http://p.test/v1'))], { clock: wallAt(0), fetch: rateLimitedOnce(retryAfter) });
  const r = await createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.is(r.text, 'fine');
  assert.equal(sleeps, [750]); // backoff: 1000 ms with jitter 0.5
  // The server's Date header makes the date readable whatever the board's clock says.
  const { deps: d2, sleeps: s2 } = setup([prov('p', oa('http://p.test/v1'))], { clock: wallAt(Date.parse('2040-01-01T00:00:00Z')), fetch: rateLimitedOnce({ ...retryAfter, date: 'Sun, 22 Feb 2026 10:00:00 GMT' }) });
  assert.is((await createChain(d2).complete({ messages: [user('x')], signal: signal() })).text, 'fine');
  assert.equal(s2, [7000]);
});

test('retry-after-ms wins; a Retry-After beyond 30 s ends this provider at once (the fallback answers)', async () => {
  a.queue({ status: 429, headers: { 'retry-after-ms': '1500', 'retry-after': '9' }, json: {} }, { status: 429, headers: { 'retry-after': '3600' }, json: {} });
  b.queue(ok('from b'));
  const { deps, sleeps } = setup([prov('p', oa(a.url, { fallback: [{ provider_ref: 'q' }] })), prov('q', oa(b.url))]);
  const r = await createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.equal([r.provider, r.text], ['q', 'from b']);
  assert.equal(sleeps, [1500]);
  assert.is(a.requests.length, 2);
});

test('5xx twice then success: exponential backoff with equal jitter (1000 → 750, 2000 → 1500 at random 0.5)', async () => {
  a.queue({ status: 503, json: {} }, { status: 500, body: 'oops' }, ok('third time'));
  const { deps, sleeps } = setup([prov('p', oa(a.url))]);
  const r = await createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.is(r.text, 'third time');
  assert.equal(sleeps, [750, 1500]);
});

test('backoff kinds from the retry block: linear and constant; max_attempts counts the first attempt', async () => {
  a.queue({ status: 502, json: {} }, { status: 502, json: {} }, { status: 502, json: {} }, { status: 502, json: {} });
  const { deps, sleeps } = setup([prov('p', oa(a.url, { retry: { max_attempts: 4, backoff: 'linear', initial_delay_ms: 100 } }))]);
  const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.is(e.code, -32020);
  assert.equal(sleeps, [75, 150, 225]);
  assert.is(a.requests.length, 4);
  a.queue({ status: 500, json: {} }, { status: 500, json: {} });
  const s2 = setup([prov('p', oa(a.url, { retry: { max_attempts: 2, backoff: 'constant', initial_delay_ms: 100 } }))]);
  await rejection(createChain(s2.deps).complete({ messages: [user('x')], signal: signal() }));
  assert.equal(s2.sleeps, [75]);
});

test('4xx is not retried', async () => {
  a.queue({ status: 400, json: { error: { type: 'invalid_request_error' } } });
  const { deps, sleeps } = setup([prov('p', oa(a.url))]);
  const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.is(e.message, 'Provider unavailable: p: HTTP 400 (invalid_request_error)');
  assert.equal(sleeps, []);
  assert.is(a.requests.length, 1);
});

test('connection refused is retried max_attempts times, then -32020 with the cause code', async () => {
  const { deps, sleeps } = setup([prov('p', oa(await deadUrl()))]);
  const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.is(e.code, -32020);
  assert.equal(e.data.providers, [{ provider: 'p', reason: 'connect', message: 'p: cannot reach endpoint (ECONNREFUSED)' }]);
  assert.equal(sleeps, [750, 1500]);
});

test('a dropped connection before the response is a connect failure, retried', async () => {
  a.queue({ destroy: true }, ok('after drop'));
  const { deps } = setup([prov('p', oa(a.url))]);
  assert.is((await createChain(deps).complete({ messages: [user('x')], signal: signal() })).text, 'after drop');
});

test('timeouts: no headers in time, and a stream that stalls mid-way; each attempt bounded', async () => {
  a.queue({ hang: true }, { sse: openaiSse({ text: ['a', 'b'] }).slice(0, 2), stall: true });
  const { deps } = setup([prov('p', oa(a.url, { streaming: true, retry: { max_attempts: 2, initial_delay_ms: 1 } }))], { timeoutMs: 150 });
  const t0 = Date.now();
  const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  const took = Date.now() - t0;
  assert.equal(e.data.providers, [{ provider: 'p', reason: 'timeout', message: 'p: no body within 150 ms (claw.runtime.yaml providers.p.timeout_ms raises it)', limit: 'timeout_ms' }]);
  assert.ok(took >= 300 && took < 2000, `took ${took} ms`);
});

test('the caller aborting stops at once: no retry, no fallback, the abort reason is thrown', async () => {
  a.queue({ hang: true });
  b.queue(ok('must not be asked'));
  const { deps } = setup([prov('p', oa(a.url, { fallback: [{ provider_ref: 'q' }] })), prov('q', oa(b.url))]);
  const ctl = new AbortController();
  setTimeout(() => ctl.abort(new Error('user cancelled')), 50);
  const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: ctl.signal }));
  assert.is(e.message, 'user cancelled');
  assert.is(b.requests.length, 0);
});

test('fallback: first down → second used; strictly in order, never skipping, depth-first', async () => {
  const dead = await deadUrl();
  // p → [q, r]; q → [s]. Order: p, q, s, r. p is down, q fails 4xx, s is down, r answers.
  b.queue({ status: 404, json: {} });
  a.queue(ok('from r'));
  const providers = [
    prov('p', oa(dead, { retry: { max_attempts: 1 }, fallback: [{ provider_ref: 'q' }, { provider_ref: 'r' }] })),
    prov('q', oa(b.url, { fallback: [{ provider_ref: 's' }] })),
    prov('r', oa(a.url)),
    prov('s', oa(dead, { retry: { max_attempts: 1 } })),
  ];
  const { deps, log } = setup(providers);
  const chain = createChain(deps);
  assert.equal(chain.order, ['p', 'q', 's', 'r']);
  const r = await chain.complete({ messages: [user('x')], signal: signal() });
  assert.is(r.provider, 'r');
  assert.equal(
    log.entries.filter((e) => e.msg === 'provider failed').map((e) => e.fields?.provider),
    ['p', 'q', 's'],
  );
});

test('fallback: an unresolvable ref is reported as that entry, the walk goes on; all failing lists every provider', async () => {
  const dead = await deadUrl();
  const { deps } = setup([prov('p', oa(dead, { retry: { max_attempts: 1 }, fallback: [{ provider_ref: 'ghost' }, { provider_ref: 'q' }] })), prov('q', oa(dead, { retry: { max_attempts: 1 } }))]);
  const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.is(e.code, -32020);
  assert.equal(e.data.providers.map((f: any) => [f.provider, f.reason]), [['p', 'connect'], ['ghost', 'config'], ['q', 'connect']]);
});

test('lazy entry point: createProviderClient answers through the same chain', async () => {
  a.queue(ok('lazy'));
  const { deps } = setup([prov('p', oa(a.url))]);
  const c = createProviderClient(deps);
  assert.is((await c.complete({ messages: [user('x')], signal: signal() })).text, 'lazy');
});

test.run();
