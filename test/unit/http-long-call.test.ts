// A call that takes longer than request_timeout_ms to answer (docs/transports.md, HTTP "Limits"; docs/a2a.md
// "Methods"): the silence while the server works is not a slow client's, so the reply still reaches the client —
// a CKP request whose handler answers late, and a blocking A2A SendMessage through the official client
// (@a2a-js/sdk, its default mode) whose agent turn outlasts the timeout.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as http from 'node:http';
import * as https from 'node:https';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { createHttpListener } from '../../src/transports/http/listen-http.ts';
import { createHttpServer } from '../../src/transports/http/server.ts';
import { parseHttpUrl, resolveHttpSettings } from '../../src/transports/http/settings.ts';
import { createRateLimiter } from '../../src/transports/http/limits.ts';
import { createAuthenticator } from '../../src/transports/http/auth.ts';
import { SecretResolver } from '../../src/kernel/secrets.ts';
import { Redactor } from '../../src/log/redactor.ts';
import { TaskService } from '../../src/a2a/tasks.ts';
import { memoryTaskStore } from '../../src/a2a/task-store.ts';
import { a2aRpcRoute } from '../../src/a2a/rpc-route.ts';
import { buildAgentCard } from '../../src/a2a/card.ts';
import { AGENT_CARD_PATH, agentCardRoute } from '../../src/a2a/card-route.ts';
import { captureLogger, makeManifest, primitive } from './helpers/fakes.ts';
import { openA2aAccess } from './helpers/a2a-open-access.ts';

const TIMEOUT_MS = 1000;
const LATE_MS = 2000;
const limits = { request_timeout_ms: TIMEOUT_MS, headers_timeout_ms: 500 };

/** POSTs one CKP request (over https with the test's self-signed certificate) and reads the answer. */
function post(url: string, ca?: string): Promise<{ status: number; body: unknown }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'claw.status' });
  return new Promise((resolve) => {
    const req = (url.startsWith('https:') ? https : http).request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, ca, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      res.on('error', (e) => resolve({ status: 0, body: e.message }));
    });
    req.on('error', (e) => resolve({ status: 0, body: e.message }));
    req.end(body);
  });
}

for (const scheme of ['http', 'https']) {
  test(`CKP over ${scheme}: a reply given after request_timeout_ms still reaches the client`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'claw-long-call-'));
    const clock = { now: () => Date.now(), monotonic: () => performance.now(), setInterval: () => ({ cancel() {} }), setTimeout: () => ({ cancel() {} }) };
    let ca: string | undefined;
    if (scheme === 'https') {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { cwd: dir, stdio: 'pipe' });
      ca = readFileSync(join(dir, 'c.pem'), 'utf8');
    }
    const t = await createHttpListener({ listen: `${scheme}://127.0.0.1:0/ckp`, http: { limits, ...(ca ? { tls: { cert_file: 'c.pem', key_file: 'k.pem' } } : {}) } } as never, {
      log: captureLogger(), clock, baseDir: dir, dataDir: '/nonexistent', secrets: new SecretResolver({ env: {} }, new Redactor()),
    });
    t.start((f) => setTimeout(() => f.reply({ jsonrpc: '2.0', id: 1, result: { late: true } }), LATE_MS));
    try {
      // Before: the socket's idle cut-off closed the connection at request_timeout_ms ("socket hang up").
      assert.equal(await post(t.url, ca), { status: 200, body: { jsonrpc: '2.0', id: 1, result: { late: true } } });
    } finally {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('A2A: a blocking SendMessage from the official client whose turn outlasts request_timeout_ms gets its completed task', async () => {
  const settings = resolveHttpSettings(parseHttpUrl('http://127.0.0.1:0/ckp'), { limits });
  const server = createHttpServer({ settings, auth: createAuthenticator([], false), limiter: createRateLimiter(0, () => 0), log: captureLogger(), http, servesA2a: true });
  let n = 0;
  const slowAgent = { channelTurns: true, turn: () => new Promise((r) => setTimeout(() => r({ reply: 'slow answer', outcome: 'message', toolCalls: [], rejections: 0 }), LATE_MS)) };
  const tasks = new TaskService({ store: memoryTaskStore(), getAgent: () => slowAgent as never, tools: false, newId: () => `id-${++n}`, now: () => Date.now(), log: captureLogger(), access: () => openA2aAccess() });
  await tasks.open();
  await server.listen();
  const base = `http://127.0.0.1:${server.address().port}`;
  const manifest = makeManifest(1, { identity: primitive('Identity', 'edge', { personality: 'Slow and careful.' }) });
  server.addRoute(AGENT_CARD_PATH, agentCardRoute(() => buildAgentCard(manifest, { endpointUrl: `${base}/a2a`, runtimeVersion: '0.1.0', security: { bearer: false, clientCert: false } })));
  server.addRoute('/a2a', a2aRpcRoute({ tasks: () => tasks, maxBodyBytes: 65536, requestTimeoutMs: TIMEOUT_MS }));
  try {
    const f = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: fetch })], cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }) }));
    const client = await f.createFromUrl(base);
    const message = { messageId: 'm-1', contextId: '', taskId: '', role: 1, parts: [{ content: { $case: 'text', value: 'take your time' }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
    const r: any = await client.sendMessage({ tenant: '', configuration: undefined, metadata: undefined, message } as never).catch((e: Error) => e);
    // Before: "fetch failed" (UND_ERR_SOCKET) at request_timeout_ms while the task ran on unseen.
    assert.not.ok(r instanceof Error, `the send failed: ${r?.message} ${r?.cause?.code ?? ''}`);
    assert.is(r.status.state, 3, 'TASK_STATE_COMPLETED');
    assert.is(r.artifacts[0].parts[0].content.value, 'slow answer');
  } finally {
    await tasks.close();
    await server.close(0);
  }
});

test.run();
