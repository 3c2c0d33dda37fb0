// What only the Streamable HTTP transport does: session and protocol-version headers, DELETE on
// close, re-initialization when the server forgets the session, the network guard, bearer tokens
// that never reach an error or a log, a server that is down. Against server-everything.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { McpClient } from '../../src/tools/mcp/client.ts';
import { McpError } from '../../src/tools/mcp/errors.ts';
import { httpTransport } from '../../src/tools/mcp/http-channel.ts';
import { mcpHttpAccess } from '../../src/tools/mcp/http-access.ts';
import { McpPool, createMcpBinder, createMcpToolImpl } from '../../src/tools/mcp/backend.ts';
import { parseMcpUri, type McpHttpTarget } from '../../src/tools/mcp/uri.ts';
import type { McpRuntimeConfig } from '../../src/tools/mcp/config.ts';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';
import type { ToolRunContext } from '../../src/tools/types.ts';
import { ProtocolError } from '../../src/protocol/errors.ts';
import { captureLogger, rejection } from '../fixtures/mcp/helpers.ts';
import { freePort, startEverythingHttp, startProxy, type EverythingHttp } from '../fixtures/mcp/http-server.ts';

const test = suite('mcp over streamable http');
const TOKEN = 'sk-test-7c1f0e9a4b2d';
const LOOPBACK_SANDBOX: SandboxSpec = { level: 'none', capabilities: { network: { mode: 'allowlist', allowed_hosts: ['127.0.0.1'] } } };

const target = (url: string): McpHttpTarget => {
  const r = parseMcpUri(url);
  if (!r.ok || r.target.transport !== 'http') throw new Error(url);
  return r.target;
};

function client(url: string, o: { sandbox?: SandboxSpec; config?: McpRuntimeConfig; secrets?: Record<string, string>; logger?: ReturnType<typeof captureLogger> } = {}) {
  const logger = o.logger ?? captureLogger();
  const access = mcpHttpAccess(target(url), o.sandbox ?? LOOPBACK_SANDBOX, {
    config: o.config ?? { servers: { [url]: { allow_loopback: true } } },
    resolveSecret: async (ref) => {
      const v = o.secrets?.[ref];
      if (v === undefined) throw new Error(`secret_ref "${ref}" could not be resolved`);
      return v;
    },
  });
  if (access.problem) throw new McpError('config', access.problem);
  const transport = httpTransport({ url, label: url, request: access.request, headers: access.headers, logger, maxFrameBytes: 8 << 20 });
  return { c: new McpClient({ transport, label: url, clientVersion: '0.1.0', logger, startTimeoutMs: 5000 }), logger };
}

let server: EverythingHttp;
test.before(async () => {
  server = await startEverythingHttp();
});
test.after(async () => {
  await server.stop();
});

test('session id from initialize and MCP-Protocol-Version on every later request; DELETE on close', async () => {
  const proxy = await startProxy(server.port);
  const { c } = client(proxy.url);
  try {
    await c.callTool('echo', { message: 'hi' });
    const [init, ...rest] = proxy.requests;
    assert.is(init.headers['mcp-session-id'], undefined);
    assert.match(String(init.headers.accept), /application\/json/);
    assert.match(String(init.headers.accept), /text\/event-stream/);
    const sid = rest[0].headers['mcp-session-id'];
    assert.ok(typeof sid === 'string' && sid.length > 0);
    for (const r of rest) {
      assert.is(r.headers['mcp-session-id'], sid);
      assert.is(r.headers['mcp-protocol-version'], '2025-11-25');
    }
    await c.close();
    const del = proxy.requests.find((r) => r.method === 'DELETE');
    assert.ok(del, 'DELETE sent on close');
    assert.is(del!.headers['mcp-session-id'], sid);
  } finally {
    await c.close();
    await proxy.close();
  }
});

test('server restarted mid-session: the client initializes a new session and the call goes through', async () => {
  const proxy = await startProxy(server.port);
  const { c } = client(proxy.url);
  try {
    assert.equal((await c.callTool('echo', { message: 'before' })).content, [{ type: 'text', text: 'Echo: before' }]);
    const firstSid = proxy.requests[1].headers['mcp-session-id'];
    assert.is(c.generation, 1);
    await server.restart();
    assert.equal((await c.callTool('echo', { message: 'after' })).content, [{ type: 'text', text: 'Echo: after' }]);
    assert.is(c.generation, 2);
    const inits = proxy.messages().filter((m) => m.method === 'initialize');
    assert.is(inits.length, 2);
    const last = proxy.requests[proxy.requests.length - 1];
    assert.ok(last.headers['mcp-session-id'] && last.headers['mcp-session-id'] !== firstSid, 'a new session id is used');
  } finally {
    await c.close();
    await proxy.close();
  }
});

test('a session the server answers 404 for is re-initialized once, and the request is sent again', async () => {
  // A proxy that forgets: after the first tools/call it answers 404 once, as a server that dropped the session would.
  const { createServer, request } = await import('node:http');
  let forget = false;
  const seen: string[] = [];
  const front = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      seen.push(`${req.method} ${body ? JSON.parse(body).method : ''} ${req.headers['mcp-session-id'] ? 'sid' : 'nosid'}`);
      if (forget && req.headers['mcp-session-id']) {
        forget = false;
        res.writeHead(404).end('Session not found');
        return;
      }
      const up = request({ host: '127.0.0.1', port: server.port, method: req.method, path: req.url, headers: req.headers, agent: false }, (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      });
      up.end(body);
    });
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(front.address() as { port: number }).port}/mcp`;
  const { c } = client(url);
  try {
    await c.callTool('echo', { message: 'one' });
    forget = true;
    assert.equal((await c.callTool('echo', { message: 'two' })).content, [{ type: 'text', text: 'Echo: two' }]);
    const calls = seen.filter((s) => s.startsWith('POST tools/call'));
    assert.equal(calls, ['POST tools/call sid', 'POST tools/call sid', 'POST tools/call sid']);
    assert.is(seen.filter((s) => s.startsWith('POST initialize')).length, 2);
    assert.ok(seen.filter((s) => s.startsWith('POST initialize')).every((s) => s.endsWith('nosid')));
  } finally {
    await c.close();
    front.closeAllConnections();
    await new Promise((r) => front.close(r));
  }
});

test('network guard: a host outside the sandbox allowlist is refused before any connection', async () => {
  const proxy = await startProxy(server.port);
  const sandbox: SandboxSpec = { level: 'none', capabilities: { network: { mode: 'allowlist', allowed_hosts: ['mcp.example.com'] } } };
  const { c } = client(proxy.url, { sandbox });
  try {
    const e = await rejection(c.callTool('echo', { message: 'x' }));
    assert.instance(e, McpError);
    assert.is(e.code, 'network-denied');
    assert.match(e.message, /not in the sandbox allowlist/);
    assert.is(proxy.requests.length, 0);
  } finally {
    await c.close();
    await proxy.close();
  }
});

test('network guard: loopback is SSRF-blocked unless the runtime config allows it for this server; mode deny refuses', async () => {
  const proxy = await startProxy(server.port);
  try {
    // https:// to a loopback address without allow_loopback: the SSRF guard refuses the address.
    const httpsUrl = proxy.url.replace('http:', 'https:');
    const a = client(httpsUrl, { config: {} });
    const e1 = await rejection(a.c.start());
    assert.is(e1.code, 'network-denied');
    assert.match(e1.message, /loopback/);
    await a.c.close();
    // plain http:// without allow_loopback is a configuration error.
    assert.throws(() => client(proxy.url, { config: {} }), /allow_loopback: true/);
    // mode deny
    const d = client(proxy.url, { sandbox: { level: 'none', capabilities: { network: { mode: 'deny' } } } });
    assert.is((await rejection(d.c.start())).code, 'network-denied');
    await d.c.close();
    assert.is(proxy.requests.length, 0);
  } finally {
    await proxy.close();
  }
});

test('bearer token from secret_ref is sent; a refused token is an auth error that never shows the token', async () => {
  const proxy = await startProxy(server.port, { token: TOKEN });
  const good = client(proxy.url, { config: { servers: { [proxy.url]: { allow_loopback: true, bearer_secret_ref: 'MCP_TOKEN', headers: { 'X-Team': 'edge', 'X-Key': { secret_ref: 'MCP_KEY' } } } } }, secrets: { MCP_TOKEN: TOKEN, MCP_KEY: 'key-material-123' } });
  const bad = client(proxy.url, { config: { servers: { [proxy.url]: { allow_loopback: true, bearer_secret_ref: 'MCP_TOKEN' } } }, secrets: { MCP_TOKEN: 'sk-wrong-token-000' } });
  try {
    assert.equal((await good.c.callTool('echo', { message: 'authorized' })).content, [{ type: 'text', text: 'Echo: authorized' }]);
    for (const r of proxy.requests) {
      assert.is(r.headers.authorization, `Bearer ${TOKEN}`);
      assert.is(r.headers['x-team'], 'edge');
      assert.is(r.headers['x-key'], 'key-material-123');
    }
    const e = await rejection(bad.c.callTool('echo', { message: 'x' }));
    assert.is(e.code, 'auth');
    assert.match(e.message, /HTTP 401/);
    assert.match(e.message, new RegExp(proxy.url.replace(/[.]/g, '\\.')));
    const everything = JSON.stringify([e.message, String(e.stack), good.logger.lines, bad.logger.lines]);
    assert.not.ok(everything.includes('sk-wrong-token-000'), 'the refused token is nowhere');
    assert.not.ok(everything.includes(TOKEN), 'the good token is nowhere');
    assert.not.ok(everything.includes('key-material-123'));
  } finally {
    await good.c.close();
    await bad.c.close();
    await proxy.close();
  }
});

test('a redirect to another origin is followed under the guard, without our credentials or session id', async () => {
  const proxy = await startProxy(server.port);
  const { createServer } = await import('node:http');
  const front = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(307, { location: proxy.url }).end());
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(front.address() as { port: number }).port}/mcp`;
  const { c } = client(url, { config: { servers: { [url]: { allow_loopback: true, bearer_secret_ref: 'T', headers: { 'X-Key': { secret_ref: 'K' } } } } }, secrets: { T: TOKEN, K: 'key-material-456' } });
  try {
    // initialize needs no session: it goes through. Later requests reach the other origin without
    // the session id, so that server cannot place them: a clear error, never a leaked credential.
    assert.is((await c.start()).serverInfo.name, 'mcp-servers/everything');
    const e = await rejection(c.callTool('echo', { message: 'via redirect' }));
    assert.match(e.message, /HTTP 400/);
    assert.ok(proxy.requests.length >= 2);
    for (const r of proxy.requests) {
      assert.is(r.headers.authorization, undefined);
      assert.is(r.headers['x-key'], undefined);
      assert.is(r.headers['mcp-session-id'], undefined);
    }
  } finally {
    await c.close();
    front.closeAllConnections();
    await new Promise((r) => front.close(r));
    await proxy.close();
  }
});

test('a server that echoes our header in an error body: the value is redacted from the message', async () => {
  const { createServer } = await import('node:http');
  const front = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(500, { 'content-type': 'text/plain' }).end(`upstream said no to ${req.headers.authorization}`));
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(front.address() as { port: number }).port}/mcp`;
  const { c, logger } = client(url, { config: { servers: { [url]: { allow_loopback: true, bearer_secret_ref: 'T' } } }, secrets: { T: TOKEN } });
  try {
    const e = await rejection(c.start());
    assert.match(e.message, /HTTP 500/);
    assert.match(e.message, /\[REDACTED\]/);
    assert.not.ok(JSON.stringify([e.message, logger.lines]).includes(TOKEN));
  } finally {
    await c.close();
    front.closeAllConnections();
    await new Promise((r) => front.close(r));
  }
});

test('server down: unreachable, naming the server; a tool on it answers -32020 and works once the server is up', async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const { c } = client(url);
  const e = await rejection(c.start());
  assert.is(e.code, 'unreachable');
  assert.match(e.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
  assert.match(e.message, /ECONNREFUSED/);
  await c.close();

  const pool = new McpPool({
    clientVersion: '0.1.0',
    http: (t) => mcpHttpAccess(t, LOOPBACK_SANDBOX, { config: { servers: { [url]: { allow_loopback: true } } }, resolveSecret: async () => '' }),
  });
  const impl = createMcpToolImpl({ uri: url, tool_name: 'echo' }, { pool, toolName: 'remote-echo' });
  const ctx = { signal: new AbortController().signal, requestId: 'r', sandbox: LOOPBACK_SANDBOX } as ToolRunContext;
  const err = await rejection(impl.run({ message: 'x' }, ctx));
  assert.instance(err, ProtocolError);
  assert.is(err.code, -32020);
  assert.match(err.message, /Tool unavailable/);
  assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
  assert.equal(err.data.server, url);
  const up = await startEverythingHttp(port);
  try {
    assert.equal((await impl.run({ message: 'back' }, ctx)).content, [{ type: 'text', text: 'Echo: back' }]);
  } finally {
    await pool.closeAll();
    await up.stop();
  }
});

test('a call whose own (narrowed) sandbox denies the host is refused (-32010 rule) before any request', async () => {
  const proxy = await startProxy(server.port);
  const pool = new McpPool({ clientVersion: '0.1.0', http: (t) => mcpHttpAccess(t, LOOPBACK_SANDBOX, { config: { servers: { [proxy.url]: { allow_loopback: true } } }, resolveSecret: async () => '' }) });
  const impl = createMcpToolImpl({ uri: proxy.url, tool_name: 'echo' }, { pool, toolName: 'remote-echo' });
  try {
    assert.is(impl.touchesOs, false, 'no process of ours: isolation is checked like an in-process builtin');
    const narrowed = { signal: new AbortController().signal, requestId: 'r', sandbox: { level: 'none', capabilities: { network: { mode: 'allowlist', allowed_hosts: ['api.example.com'] } } } } as ToolRunContext;
    const e = await rejection(impl.run({ message: 'x' }, narrowed));
    assert.is(e.name, 'SandboxViolation');
    assert.is(e.rule, 'network.host-not-allowed');
    const denied = { ...narrowed, sandbox: { level: 'none', capabilities: { network: { mode: 'deny' } } } } as ToolRunContext;
    assert.is((await rejection(impl.run({ message: 'x' }, denied))).rule, 'network.mode-deny');
    assert.is(proxy.requests.length, 0);
    const ok = { ...narrowed, sandbox: LOOPBACK_SANDBOX } as ToolRunContext;
    assert.equal((await impl.run({ message: 'y' }, ok)).content, [{ type: 'text', text: 'Echo: y' }]);
  } finally {
    await pool.closeAll();
    await proxy.close();
  }
});

test('binder at STARTING: an unreachable server is retried with backoff, then the tool is unavailable (not fatal)', async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const logger = captureLogger();
  const pool = new McpPool({ clientVersion: '0.1.0', logger, http: (t) => mcpHttpAccess(t, LOOPBACK_SANDBOX, { config: { servers: { [url]: { allow_loopback: true } } }, resolveSecret: async () => '' }) });
  const binder = createMcpBinder(pool, { logger, retryDelaysMs: [50, 100] });
  const tool = (name: string, spec: Record<string, unknown> = {}) => ({ name, spec: { mcp_source: { uri: url, tool_name: 'echo' }, ...spec }, labels: {} }) as any;
  try {
    const b = await binder.bind(tool('no-schema'));
    assert.equal(b.inputSchema, { type: 'object' });
    assert.is(logger.lines.filter((l) => l.msg === 'mcp server unreachable at start; retrying').length, 2);
    assert.ok(logger.lines.some((l) => l.level === 'error' && l.msg === 'mcp server unreachable at start; the tool is unavailable' && l.fields?.server === url));
    const e = await rejection(b.impl.run({ message: 'x' }, { signal: new AbortController().signal, requestId: 'r', sandbox: LOOPBACK_SANDBOX } as ToolRunContext));
    assert.is(e.code, -32020);
    assert.match(e.message, /unreachable at start/);
    // A second tool on the same server does not wait through the retries again.
    const t0 = Date.now();
    await binder.bind(tool('no-schema-2'));
    assert.is(logger.lines.filter((l) => l.msg === 'mcp server unreachable at start; retrying').length, 2);
    assert.ok(Date.now() - t0 < 1000);
    // Declared description + input_schema: lazy, nothing contacted at STARTING.
    const lazy = await binder.bind(tool('declared', { description: 'd', input_schema: { type: 'object' } }));
    assert.is(lazy.inputSchema, undefined);
    // A server that is up but refuses the configuration (plain http without allow_loopback) is fatal.
    const strict = createMcpBinder(new McpPool({ clientVersion: '0.1.0', http: (t) => mcpHttpAccess(t, LOOPBACK_SANDBOX, { config: {}, resolveSecret: async () => '' }) }));
    assert.match((await rejection(strict.bind(tool("strict")))).message, /allow_loopback/);
  } finally {
    await binder.close();
  }
});

test.run();
