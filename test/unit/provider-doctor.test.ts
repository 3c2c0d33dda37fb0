// `claw doctor <manifest>` provider checks (src/provider/doctor.ts) against the simulated OpenAI/Ollama server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { ANSWER_CAP_BYTES, DOCTOR_TIMEOUT_MS, checkProviders, doctorBound, providerDoctorReport } from '../../src/provider/doctor.ts';
import { startSimLlm, type SimLlm } from '../helpers/sim-llm-server.ts';
import { deadUrl } from '../helpers/fake-llm-server.ts';
import { prov, setup } from './provider-fixtures.ts';
import { makeManifest } from './helpers/fakes.ts';

let sim: SimLlm;
test.before.each(async () => {
  sim = await startSimLlm({ models: ['qwen2.5:1.5b', 'llama3.2:1b'], intents: [{ when: 'ping', tool: 'ping', args: {}, reply: 'pong' }], fallbackReply: 'ok' });
});
test.after.each(async () => {
  await sim.close();
});

const spec = (over: Record<string, unknown> = {}) => ({ protocol: 'openai-compatible', endpoint: `${sim.url}/v1`, model: 'qwen2.5:1.5b', auth: { type: 'none' }, ...over });

async function check(specs: [string, Record<string, unknown>][], probe = false) {
  const { deps } = setup([]);
  const m = makeManifest(1, { providers: specs.map(([n, s]) => prov(n, s)) });
  return checkProviders(m, { secrets: deps.secrets, clock: deps.clock, ledger: deps.ledger, timeoutMs: 3000 }, { probe });
}
const states = (r: { checks: { check: string; state: string }[] }) => r.checks.map((c) => `${c.check}:${c.state}`);

test('a usable endpoint with the model listed; --probe finds native tool calling and structured output', async () => {
  const [r] = await check([['local', spec()]], true);
  assert.is(r!.usable, true);
  assert.equal(states(r!), ['reachable:ok', 'auth:ok', 'model:ok', 'native_tools:ok', 'structured_output:ok']);
  assert.ok(r!.checks[3]!.detail.includes('the model called the probe tool'));
  assert.equal(sim.requests.map((q) => q.path), ['/v1/models', '/v1/chat/completions', '/v1/chat/completions']);
});

test('a model that is not pulled: not usable, and the line says what to run', async () => {
  const [r] = await check([['local', spec({ model: 'phi3:mini' })]]);
  assert.is(r!.usable, false);
  assert.is(r!.checks.at(-1)!.detail, `phi3:mini is not among the 2 models listed by ${sim.url}/v1/models (qwen2.5:1.5b, llama3.2:1b) — run: ollama pull phi3:mini`);
});

test('an Ollama endpoint without /v1 is found through /api/tags and the line says to add /v1', async () => {
  const [r] = await check([['local', spec({ endpoint: sim.url })]]);
  assert.equal(states(r!), ['reachable:ok', 'auth:ok', 'reachable:warn', 'model:ok']);
  assert.match(r!.checks[2]!.detail, /the endpoint should be http:\/\/127\.0\.0\.1:\d+\/v1/);
});

test('a server without tool calling or structured output: --probe says which mode the agent will use', async () => {
  sim.options.tools = false;
  sim.options.jsonSchema = false;
  const [r] = await check([['local', spec()]], true);
  assert.equal(states(r!).slice(3), ['native_tools:fail', 'structured_output:fail']);
  assert.match(r!.checks[3]!.detail, /^not supported \(HTTP 400: registry\.ollama\.ai\/library\/qwen2\.5:1\.5b does not support tools\): the agent falls back to json_schema mode$/);
});

test('unreachable primary, refused key; the fallback is checked too; the report names each', async () => {
  sim.options.apiKey = 'right';
  const dead = await deadUrl();
  const reports = await check([
    ['local', spec({ endpoint: `${dead}/v1`, fallback: [{ provider_ref: 'cloud' }] })],
    ['cloud', spec({ auth: { type: 'bearer', secret_ref: 'LLM_KEY' } })],
  ]);
  assert.equal(reports.map((r) => [r.provider, r.primary, r.usable]), [['local', true, false], ['cloud', false, false]]);
  assert.match(reports[0]!.checks[0]!.detail, /cannot reach the endpoint \(ECONNREFUSED\)/);
  assert.equal(states(reports[1]!), ['reachable:ok', 'auth:fail']);
  const text = providerDoctorReport(reports);
  assert.ok(text.includes('local (primary): openai-compatible') && text.includes('NOT usable') && text.includes('FAIL auth: HTTP 401'), text);
});

/** A server that accepts every connection and never answers; close() ends them all. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer(() => {});
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** checkProviders with claw.runtime.yaml `timeouts` and no deps-wide limit; fails the test past `maxMs`. */
async function checkWithin(maxMs: number, specs: [string, Record<string, unknown>][], timeouts: Record<string, { timeoutMs?: number; attemptDeadlineMs?: number }>) {
  const { deps } = setup([]);
  const m = makeManifest(1, { providers: specs.map(([n, s]) => prov(n, s)) });
  const t0 = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const over = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`doctor still waiting after ${maxMs} ms`)), maxMs)));
  try {
    const reports = await Promise.race([checkProviders(m, { secrets: deps.secrets, clock: deps.clock, ledger: deps.ledger, timeouts }), over]);
    return { reports, took: Date.now() - t0 };
  } finally {
    clearTimeout(timer);
  }
}

test('a server that accepts and never answers: each provider is given up at its own timeout_ms, and the line names the setting', async () => {
  const silent = await silentServer();
  try {
    const { reports, took } = await checkWithin(
      5000,
      [
        ['slow', spec({ endpoint: `${silent.url}/v1`, fallback: [{ provider_ref: 'capped' }] })],
        ['capped', spec({ endpoint: `${silent.url}/v1` })],
      ],
      { slow: { timeoutMs: 300 }, capped: { timeoutMs: 60_000, attemptDeadlineMs: 400 } },
    );
    assert.ok(took >= 650 && took < 3000, `took ${took} ms`);
    assert.equal(reports.map((r) => [r.provider, r.usable, states(r)]), [['slow', false, ['reachable:fail']], ['capped', false, ['reachable:fail']]]);
    assert.is(reports[0]!.checks[0]!.detail, `${silent.url}/v1/models: no answer within 300 ms (claw.runtime.yaml providers.slow.timeout_ms changes it)`);
    assert.is(reports[1]!.checks[0]!.detail, `${silent.url}/v1/models: no answer within 400 ms (claw.runtime.yaml providers.capped.attempt_deadline_ms changes it)`);
    assert.ok(providerDoctorReport(reports).includes('FAIL reachable:'));
  } finally {
    await silent.close();
  }
});

test('an answer that never ends is read up to its cap and the download cancelled: the doctor does not wait for the timeout or hold the body', async () => {
  // 64 KiB every 5 ms, forever: ~12 MB/s, so waiting for the 3 s timeout would take ~40 MB and 3 s.
  let sent = 0;
  let closedAt = 0;
  const t0 = Date.now();
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"data":[');
    const chunk = Buffer.alloc(64 * 1024, ' ');
    const timer = setInterval(() => {
      sent += chunk.length;
      res.write(chunk);
    }, 5);
    res.on('close', () => {
      clearInterval(timer);
      closedAt = Date.now() - t0;
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { reports, took } = await checkWithin(2500, [['endless', spec({ endpoint: `${url}/v1` })]], { endless: { timeoutMs: 3000 } });
    assert.ok(took < 2000, `took ${took} ms`);
    assert.equal(states(reports[0]!)[0], 'reachable:ok');
    for (let i = 0; i < 100 && !closedAt; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(closedAt > 0 && closedAt < 2000, `the server's response was closed at ${closedAt} ms`);
    // What the kernel's socket buffers on loopback hold comes on top of the cap (2.1 MB measured in all).
    assert.ok(sent <= ANSWER_CAP_BYTES + 8 * 1024 * 1024, `${sent} bytes sent before the doctor hung up`);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test('the bound without claw.runtime.yaml settings is the doctor default, else the deps-wide one', () => {
  assert.equal(doctorBound({}, 'p'), { ms: DOCTOR_TIMEOUT_MS, key: 'timeout_ms', provider: 'p' });
  assert.equal(doctorBound({ timeoutMs: 3000, timeouts: { q: { timeoutMs: 1 } } }, 'p'), { ms: 3000, key: 'timeout_ms', provider: 'p' });
  assert.equal(doctorBound({ timeouts: { p: { attemptDeadlineMs: 5000 } } }, 'p'), { ms: 5000, key: 'attempt_deadline_ms', provider: 'p' });
});

test.run();
