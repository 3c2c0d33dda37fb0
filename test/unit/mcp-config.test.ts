// claw.runtime.yaml `mcp:` (src/tools/mcp/config.ts via runtimeConfigSchema), and the guard's
// streaming form (guardedRequest) that the MCP HTTP transport uses: redirects re-checked, abort.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runtimeConfigSchema } from '../../src/config/runtime-config.ts';
import { guardedRequest, FetchFailed, NetworkDenied } from '../../src/net/guarded-fetch.ts';

const parse = (mcp: unknown) => v.safeParse(runtimeConfigSchema, { mcp });

test('the documented mcp section parses; reserved headers, bad names, non-HTTP keys and unknown keys do not', () => {
  const ok = parse({
    start_retry_delays_ms: [500, 1000, 2000],
    servers: {
      'https://mcp.example.com/mcp': { bearer_secret_ref: 'MCP_TOKEN', headers: { 'X-Api-Version': '2', 'X-Api-Key': { secret_ref: 'MCP_KEY' } } },
      'http://127.0.0.1:3001/mcp': { allow_loopback: true },
    },
  });
  assert.ok(ok.success, JSON.stringify(ok.issues));
  assert.not.ok(parse({ servers: { 'https://x/mcp': { headers: { 'Mcp-Session-Id': 'abc' } } } }).success);
  assert.not.ok(parse({ servers: { 'https://x/mcp': { headers: { Host: 'evil' } } } }).success);
  assert.not.ok(parse({ servers: { 'https://x/mcp': { headers: { 'bad name': 'v' } } } }).success);
  assert.not.ok(parse({ servers: { 'https://x/mcp': { headers: { 'X-A': 'line\r\nInjected: 1' } } } }).success);
  assert.not.ok(parse({ servers: { 'stdio:///bin/srv': {} } }).success);
  assert.not.ok(parse({ servers: { 'https://x/mcp': { token: 'inline' } } }).success);
  assert.not.ok(parse({ servers: { 'https://x/mcp': { bearer_secret_ref: '' } } }).success);
  assert.not.ok(parse({ start_retry_delays_ms: [-1] }).success);
  assert.not.ok(parse({ start_retry_delays_ms: new Array(11).fill(1) }).success);
});

async function server(handler: Parameters<typeof createServer>[1]) {
  const s = createServer(handler);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { port: (s.address() as AddressInfo).port, close: () => (s.closeAllConnections(), new Promise((r) => s.close(r))) };
}

test('guardedRequest: a redirect to a host outside the allowlist is refused at that hop', async () => {
  const s = await server((_req, res) => res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data' }).end());
  try {
    const e = await guardedRequest(`http://127.0.0.1:${s.port}/mcp`, { method: 'POST', body: '{}' }, { mode: 'allowlist', allowed_hosts: ['127.0.0.1'] }, { checkAddress: () => null }).catch((x) => x);
    assert.instance(e, NetworkDenied);
    assert.is(e.reason, 'host-not-allowed');
  } finally {
    await s.close();
  }
});

test('guardedRequest: the body streams; the caller signal aborts it mid-stream', async () => {
  const s = await server((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: first\n\n');
  });
  try {
    const ctl = new AbortController();
    const r = await guardedRequest(`http://127.0.0.1:${s.port}/`, { signal: ctl.signal }, { mode: 'allow-all' }, { checkAddress: () => null });
    assert.is(r.status, 200);
    const first = await new Promise<string>((res) => r.body.once('data', (c: Buffer) => res(c.toString())));
    assert.is(first, 'data: first\n\n');
    const closed = new Promise((res) => r.body.once('close', res));
    ctl.abort();
    await closed;
    assert.ok(r.body.destroyed);
  } finally {
    await s.close();
  }
});

test('guardedRequest: loopback refused by the default SSRF check; no answer in time is a timeout', async () => {
  const s = await server(() => {});
  try {
    const e1 = await guardedRequest(`http://127.0.0.1:${s.port}/`, {}, { mode: 'allow-all' }).catch((x) => x);
    assert.instance(e1, NetworkDenied);
    assert.is(e1.reason, 'ssrf-blocked');
    const e2 = await guardedRequest(`http://127.0.0.1:${s.port}/`, { timeoutMs: 200 }, { mode: 'allow-all' }, { checkAddress: () => null }).catch((x) => x);
    assert.instance(e2, FetchFailed);
    assert.is(e2.kind, 'timeout');
  } finally {
    await s.close();
  }
});

test.run();
