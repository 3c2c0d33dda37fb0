// The two limits of one provider attempt (docs/providers.md "Timeouts"): `timeout_ms` (idle: to the
// headers and between chunks) and `attempt_deadline_ms` (the whole attempt), over a fake fetch and a
// manual clock, so a body that trickles forever is driven tick by tick.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { createChain } from '../../src/provider/chain.ts';
import { createEmbeddingsClient } from '../../src/provider/embeddings.ts';
import { runtimeConfigSchema } from '../../src/config/runtime-config.ts';
import { providerTimeoutsOf } from '../../src/runtime/provider-chain.ts';
import { FakeClock } from './helpers/fakes.ts';
import { openaiJson } from '../helpers/fake-llm-server.ts';
import { prov, rejection, setup, signal, user } from './provider-fixtures.ts';

const enc = new TextEncoder();
const spec = (name: string, over: Record<string, unknown> = {}) => ({
  protocol: 'openai-compatible',
  endpoint: `http://${name}.test/v1`,
  model: 'm',
  auth: { type: 'none' },
  retry: { max_attempts: 1 },
  ...over,
});

/**
 * A fetch whose body gets `chunk` (or chunk(n) for the n-th tick, from 0) each time the test calls tick();
 * honours the request's signal like undici.
 */
function tricklingFetch(chunk: string | ((n: number) => string), contentType: string) {
  const pushes: (() => void)[] = [];
  const f = (async (_url: string, init: RequestInit) => {
    const sig = init.signal!;
    let n = 0;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        pushes.push(() => {
          if (!sig.aborted) c.enqueue(enc.encode(typeof chunk === 'string' ? chunk : chunk(n++)));
        });
        sig.addEventListener('abort', () => c.error(sig.reason), { once: true });
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': contentType } });
  }) as unknown as typeof fetch;
  return { fetch: f, tick: () => pushes.forEach((p) => p()) };
}

/** A fetch that never answers the `hang` host (until aborted) and answers every other one. */
function hangingFetch(hang: string, requests: string[]) {
  return (async (url: string, init: RequestInit) => {
    requests.push(url);
    if (new URL(url).host === hang)
      return new Promise<Response>((_, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason), { once: true }));
    return new Response(JSON.stringify(openaiJson({ content: 'from the fallback' })), { status: 200, headers: { 'content-type': 'application/json' } });
  }) as unknown as typeof fetch;
}

const turn = () => new Promise<void>((r) => setImmediate(r));

/** Ticks the clock (a chunk per second) until `p` settles or `max` ticks pass; returns the ticks taken. */
async function drive(p: Promise<unknown>, clock: FakeClock, tick: () => void, max: number): Promise<number> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < max; i++) {
    await turn();
    if (settled) return i;
    tick();
    await turn();
    clock.advance(1000);
  }
  await turn();
  return settled ? max : -1;
}

const delta = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\n';

test('SSE keep-alive comments, one per tick forever, do not re-arm timeout_ms: the attempt ends at the idle limit', async () => {
  const clock = new FakeClock();
  const t = tricklingFetch(': ping\n\n', 'text/event-stream');
  const { deps } = setup([prov('p', spec('p', { streaming: true }))], { clock, fetch: t.fetch, timeouts: { p: { timeoutMs: 5000, attemptDeadlineMs: 20_000 } } });
  const start = clock.monotonic();
  const p = rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  const ticks = await drive(p, clock, t.tick, 100);
  assert.ok(ticks > 0, 'the attempt never ended');
  const e = await p;
  assert.is(clock.monotonic() - start, 5000, 'the pings held the attempt past timeout_ms');
  assert.equal(e.data.providers, [
    { provider: 'p', reason: 'timeout', limit: 'timeout_ms', message: 'p: no body within 5000 ms (claw.runtime.yaml providers.p.timeout_ms raises it)' },
  ]);
});

test("Anthropic `ping` events forever are keep-alives too: the attempt ends at timeout_ms", async () => {
  const clock = new FakeClock();
  const start = 'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":0}}}\n\n';
  const ping = 'event: ping\ndata: {"type": "ping"}\n\n';
  const t = tricklingFetch((n) => (n === 0 ? start : ping), 'text/event-stream');
  const anthropic = spec('p', { protocol: 'anthropic-native', endpoint: 'http://p.test', streaming: true });
  const { deps } = setup([prov('p', anthropic)], { clock, fetch: t.fetch, timeouts: { p: { timeoutMs: 4000, attemptDeadlineMs: 60_000 } } });
  const t0 = clock.monotonic();
  const p = rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.ok((await drive(p, clock, t.tick, 100)) > 0, 'the attempt never ended');
  const e = await p;
  // message_start (tick 0, at 0 s) was the last progress.
  assert.is(clock.monotonic() - t0, 4000);
  assert.is(e.data.providers[0].limit, 'timeout_ms');
});

test('OpenAI-style empty deltas (`{}`, empty content, a role alone), one per tick forever, are keep-alives: the attempt ends at timeout_ms', async () => {
  const clock = new FakeClock();
  const empty = ['{"choices":[{"delta":{}}]}', '{"choices":[{"delta":{"content":""}}]}', '{"choices":[{"delta":{"role":"assistant"}}]}', '{"choices":[{"index":0,"delta":{"content":"","tool_calls":[]}}]}'];
  // tick 0: one piece of the answer; then empty deltas, the last of them trickled in two halves.
  const t = tricklingFetch((n) => (n === 0 ? delta : n % 5 === 3 ? 'data: {"choices":[{"del' : n % 5 === 4 ? 'ta":{}}]}\n\n' : `data: ${empty[n % 4]}\n\n`), 'text/event-stream');
  const { deps } = setup([prov('p', spec('p', { streaming: true }))], { clock, fetch: t.fetch, timeouts: { p: { timeoutMs: 4000, attemptDeadlineMs: 60_000 } } });
  const start = clock.monotonic();
  const p = rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.ok((await drive(p, clock, t.tick, 100)) > 0, 'the attempt never ended');
  const e = await p;
  // The half event at tick 3 (3 s) was the last data seen growing (a trickled event is progress until it is
  // whole); the idle limit ran from there.
  assert.is(clock.monotonic() - start, 7000, `the empty deltas held the attempt for ${clock.monotonic() - start} ms`);
  assert.is(e.data.providers[0].limit, 'timeout_ms');
});

test('a reasoning model streaming `reasoning_content` for longer than timeout_ms is making progress: the answer after it arrives', async () => {
  const clock = new FakeClock();
  const think = 'data: {"choices":[{"delta":{"content":"","reasoning_content":"hmm "}}]}\n\n';
  const end = 'data: {"choices":[{"delta":{"content":"done"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
  const t = tricklingFetch((n) => (n < 10 ? think : end), 'text/event-stream');
  const { deps } = setup([prov('p', spec('p', { streaming: true }))], { clock, fetch: t.fetch, timeouts: { p: { timeoutMs: 3000, attemptDeadlineMs: 60_000 } } });
  const p = createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.ok((await drive(p, clock, t.tick, 100)) > 0, 'the attempt never ended');
  assert.is((await p).text, 'done');
});

test('blank lines and whitespace-only chunks in a stream are keep-alives too; a content event re-arms the limit', async () => {
  const clock = new FakeClock();
  // tick 0 and 1: an event with data (progress); then only blank lines, CRLFs and spaces.
  const t = tricklingFetch((n) => (n < 2 ? delta : ['\n', '\r\n', ' \n'][n % 3]!), 'text/event-stream');
  const { deps } = setup([prov('p', spec('p', { streaming: true }))], { clock, fetch: t.fetch, timeouts: { p: { timeoutMs: 4000, attemptDeadlineMs: 60_000 } } });
  const start = clock.monotonic();
  const p = rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.ok((await drive(p, clock, t.tick, 100)) > 0, 'the attempt never ended');
  const e = await p;
  // The last content came at 1 s (the second tick); the idle limit ran from there.
  assert.is(clock.monotonic() - start, 5000);
  assert.is(e.data.providers[0].limit, 'timeout_ms');
});

test('a data line trickled a few characters per tick is progress: only the deadline ends it', async () => {
  const clock = new FakeClock();
  const t = tricklingFetch((n) => (n === 0 ? 'data: {"choices":[{"delta":{"content":"' : 'ab'), 'text/event-stream');
  const { deps } = setup([prov('p', spec('p', { streaming: true }))], { clock, fetch: t.fetch, timeouts: { p: { timeoutMs: 3000, attemptDeadlineMs: 12_000 } } });
  const start = clock.monotonic();
  const p = rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.ok((await drive(p, clock, t.tick, 100)) > 0, 'the attempt never ended');
  const e = await p;
  assert.is(clock.monotonic() - start, 12_000);
  assert.is(e.data.providers[0].limit, 'attempt_deadline_ms');
});

test('content events forever end at attempt_deadline_ms', async () => {
  const clock = new FakeClock();
  const t = tricklingFetch(delta, 'text/event-stream');
  const { deps } = setup([prov('p', spec('p', { streaming: true }))], { clock, fetch: t.fetch, timeouts: { p: { timeoutMs: 5000, attemptDeadlineMs: 20_000 } } });
  const start = clock.monotonic();
  const p = rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.ok((await drive(p, clock, t.tick, 100)) > 0, 'the attempt never ended');
  const e = await p;
  assert.is(clock.monotonic() - start, 20_000);
  assert.equal(e.data.providers, [
    { provider: 'p', reason: 'timeout', limit: 'attempt_deadline_ms', message: 'p: attempt not finished within 20000 ms (claw.runtime.yaml providers.p.attempt_deadline_ms raises it)' },
  ]);
});

test('a non-streamed body: whitespace per tick is idle (timeout_ms), a character per tick runs to the deadline', async () => {
  const clock = new FakeClock();
  const t = tricklingFetch(' \n', 'application/json');
  const { deps } = setup([prov('p', spec('p'))], { clock, fetch: t.fetch, timeoutMs: 3000, attemptDeadlineMs: 30_000 });
  const start = clock.monotonic();
  const p = rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.ok((await drive(p, clock, t.tick, 100)) > 0, 'the attempt never ended');
  assert.is((await p).data.providers[0].limit, 'timeout_ms');
  assert.is(clock.monotonic() - start, 3000);

  const clock2 = new FakeClock();
  const t2 = tricklingFetch('1', 'application/json');
  const { deps: d2 } = setup([prov('p', spec('p'))], { clock: clock2, fetch: t2.fetch, timeoutMs: 3000, attemptDeadlineMs: 30_000 });
  const p2 = rejection(createChain(d2).complete({ messages: [user('x')], signal: signal() }));
  assert.ok((await drive(p2, clock2, t2.tick, 100)) > 0, 'the attempt never ended');
  const e2 = await p2;
  assert.is(e2.data.providers[0].limit, 'attempt_deadline_ms');
  assert.match(e2.data.providers[0].message, /within 30000 ms/);
});

test('a small timeout_ms ends a hanging provider and the chain falls back at once', async () => {
  const clock = new FakeClock();
  const requests: string[] = [];
  const { deps } = setup([prov('ollama', spec('ollama', { fallback: [{ provider_ref: 'cloud' }] })), prov('cloud', spec('cloud'))], {
    clock,
    fetch: hangingFetch('ollama.test', requests),
    timeoutMs: undefined, // the fixture's short deps-wide limit off: only the provider's own applies
    timeouts: { ollama: { timeoutMs: 2000 } },
  });
  const p = createChain(deps).complete({ messages: [user('x')], signal: signal() });
  const ticks = await drive(p, clock, () => {}, 200);
  assert.ok(ticks > 0, 'never answered');
  assert.ok(ticks <= 3, `took ${ticks} s: the default 120 s applied`);
  assert.is((await p).text, 'from the fallback');
  assert.equal(requests, ['http://ollama.test/v1/chat/completions', 'http://cloud.test/v1/chat/completions']);
});

test('the idle limit names timeout_ms; an idle limit over the deadline never outlives it', async () => {
  const clock = new FakeClock();
  const { deps } = setup([prov('p', spec('p'))], { clock, fetch: hangingFetch('p.test', []), timeouts: { p: { timeoutMs: 4000 } } });
  const p = rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  await drive(p, clock, () => {}, 10);
  assert.equal((await p).data.providers, [{ provider: 'p', reason: 'timeout', limit: 'timeout_ms', message: 'p: no response within 4000 ms (claw.runtime.yaml providers.p.timeout_ms raises it)' }]);

  const clock2 = new FakeClock();
  const { deps: d2 } = setup([prov('p', spec('p'))], { clock: clock2, fetch: hangingFetch('p.test', []), timeouts: { p: { timeoutMs: 60_000, attemptDeadlineMs: 3000 } } });
  const p2 = rejection(createChain(d2).complete({ messages: [user('x')], signal: signal() }));
  await drive(p2, clock2, () => {}, 10);
  assert.is((await p2).data.providers[0].limit, 'attempt_deadline_ms');
});

test('embeddings: a trickling reply ends at the deadline; an explicit timeout_ms lifts the 30 s embeddings cap', async () => {
  const clock = new FakeClock();
  const t = tricklingFetch('1', 'application/json');
  const { deps } = setup([prov('p', spec('p'))], { clock, fetch: t.fetch, timeouts: { p: { attemptDeadlineMs: 10_000 } } });
  const client = createEmbeddingsClient(deps, deps.manifest.providers[0]!, { model: 'e', dimensions: 2 });
  const p = rejection(client.embed(['a']));
  assert.ok((await drive(p, clock, t.tick, 50)) > 0, 'the attempt never ended');
  assert.is((await p).detail.limit, 'attempt_deadline_ms');

  const clock2 = new FakeClock();
  const { deps: d2 } = setup([prov('p', spec('p'))], { clock: clock2, fetch: hangingFetch('p.test', []), timeouts: { p: { timeoutMs: 45_000 } } });
  const p2 = rejection(createEmbeddingsClient(d2, d2.manifest.providers[0]!, { model: 'e', dimensions: 2 }).embed(['a']));
  const ticks = await drive(p2, clock2, () => {}, 100);
  assert.ok(ticks >= 45 && ticks <= 46, `ended after ${ticks} s`);
  assert.match((await p2).message, /within 45000 ms/);
});

test('claw.runtime.yaml providers.<name>: timeout_ms and attempt_deadline_ms are positive integers up to an hour', () => {
  const parse = (p: unknown) => v.safeParse(runtimeConfigSchema, { providers: { p } });
  assert.ok(parse({ timeout_ms: 5000, attempt_deadline_ms: 3_600_000, output: 'prompt' }).success);
  for (const bad of [{ timeout_ms: 0 }, { timeout_ms: 1.5 }, { attempt_deadline_ms: 3_600_001 }, { timeout_ms: '5000' }, { deadline_ms: 1 }])
    assert.not.ok(parse(bad).success, JSON.stringify(bad));
  assert.equal(providerTimeoutsOf({ providers: { a: { output: 'auto' }, b: { timeout_ms: 10 }, c: { attempt_deadline_ms: 20, timeout_ms: 5 } } }), {
    b: { timeoutMs: 10 },
    c: { timeoutMs: 5, attemptDeadlineMs: 20 },
  });
});

test.run();
