// The two limits of a provider attempt end to end (docs/providers.md "Timeouts"): `claw chat` through
// dist/claw.mjs against a node:http OpenAI-compatible server that either sends `: ping` keep-alive lines
// and never a completion (only timeout_ms ends it: keep-alives are not progress), or trickles content
// forever under /trickle (timeout_ms re-armed by each event; attempt_deadline_ms ends it). The error names
// the limit and its key, or the fallback answers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chat, makeAgent, openaiProvider, removeAgents } from './chat-helpers.ts';

let server: Server;
let url: string;
let open = 0;
const streams = new Set<ServerResponse>();

test.before(async () => {
  server = createServer((req, res) => {
    req.resume();
    if (!req.url?.endsWith('/chat/completions')) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    open++;
    streams.add(res);
    const line = req.url.startsWith('/trickle/') ? 'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n' : ': ping\n\n';
    const ping = setInterval(() => res.write(line), 100);
    res.on('close', () => {
      clearInterval(ping);
      streams.delete(res);
      open--;
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.after(async () => {
  for (const s of streams) s.destroy();
  await new Promise((r) => server.close(r));
  removeAgents();
});

const pinging = (over: Record<string, unknown> = {}) => openaiProvider(url, { name: 'pinging', streaming: true, ...over });
const settings = { providers: { pinging: { timeout_ms: 1000, attempt_deadline_ms: 1500 } } };

/** Waits until the attempt's abort has closed every connection: nothing left streaming to a turn that ended. */
async function allClosed(): Promise<void> {
  for (let i = 0; i < 50 && open > 0; i++) await new Promise((res) => setTimeout(res, 20));
  assert.is(open, 0);
}

test('a stream of `: ping` lines forever ends at timeout_ms (keep-alives are not progress); the error names the limit and its key', async () => {
  const a = makeAgent({ providers: [pinging()], runtime: settings });
  const t0 = Date.now();
  const r = await chat(a, ['hello'], { timeoutMs: 15_000 });
  const took = Date.now() - t0;
  assert.is(r.code, 1, r.stderr);
  assert.equal(r.replies.length, 1, r.stdout);
  assert.match(r.replies[0]!, /^error: Provider unavailable: pinging: no body within 1000 ms \(claw\.runtime\.yaml providers\.pinging\.timeout_ms raises it\)/);
  assert.ok(took >= 1000 && took < 10_000, `took ${took} ms`);
  await allClosed();
});

test('content trickled forever ends at attempt_deadline_ms', async () => {
  const a = makeAgent({ providers: [openaiProvider(`${url}/trickle`, { name: 'trickling', streaming: true })], runtime: { providers: { trickling: { timeout_ms: 1000, attempt_deadline_ms: 1500 } } } });
  const t0 = Date.now();
  const r = await chat(a, ['hello'], { timeoutMs: 15_000 });
  const took = Date.now() - t0;
  assert.is(r.code, 1, r.stderr);
  assert.match(r.replies.at(-1) ?? '', /error: Provider unavailable: trickling: attempt not finished within 1500 ms \(claw\.runtime\.yaml providers\.trickling\.attempt_deadline_ms raises it\)/);
  assert.ok(took >= 1500 && took < 10_000, `took ${took} ms`);
  await allClosed();
});

test('the fallback answers once the pinging provider hits its idle limit', async () => {
  const a = makeAgent({
    providers: [
      pinging({ fallback: [{ provider_ref: 'offline' }] }),
      { name: 'offline', protocol: 'custom', endpoint: 'file:rules.yaml', model: 'rules', auth: { type: 'none' } },
    ],
    files: { 'rules.yaml': 'rules:\n  - match: "^hello"\n    message: "OFFLINE hello"\n' },
    runtime: settings,
  });
  const r = await chat(a, ['hello'], { timeoutMs: 15_000 });
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies, ['OFFLINE hello']);
});

test('an out-of-range attempt_deadline_ms is refused at start, naming the key', async () => {
  const a = makeAgent({ providers: [pinging()], runtime: { providers: { pinging: { attempt_deadline_ms: 0 } } } });
  const r = await chat(a, ['hello'], { timeoutMs: 15_000 });
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /attempt_deadline_ms/);
});

test.run();
