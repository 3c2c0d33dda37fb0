// One client core, two transports: the same behaviour checks run against server-everything over
// stdio (a child process) and over Streamable HTTP (its streamableHttp mode behind a recording
// proxy, reached through the network guard).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { McpClient } from '../../src/tools/mcp/client.ts';
import { McpError } from '../../src/tools/mcp/errors.ts';
import { httpTransport } from '../../src/tools/mcp/http-channel.ts';
import { mcpHttpAccess } from '../../src/tools/mcp/http-access.ts';
import { parseMcpUri, type McpHttpTarget } from '../../src/tools/mcp/uri.ts';
import { minimalMcpEnv } from '../../src/tools/mcp/node-spawn.ts';
import { EVERYTHING_SERVER, NODE, captureLogger, recordingSpawn, rejection } from '../fixtures/mcp/helpers.ts';
import { startEverythingHttp, startProxy, type EverythingHttp, type Proxy } from '../fixtures/mcp/http-server.ts';

interface Harness {
  client: McpClient;
  /** JSON-RPC messages the client sent, in order. */
  sent(): any[];
  close(): Promise<void>;
}

const logger = captureLogger();

async function stdioHarness(): Promise<Harness> {
  const rec = recordingSpawn();
  const client = new McpClient({ command: NODE, args: [EVERYTHING_SERVER, 'stdio'], env: minimalMcpEnv(process.env), spawn: rec.spawn, clientVersion: '0.1.0', logger, label: 'everything' });
  return { client, sent: () => rec.written as any[], close: () => client.close() };
}

export function httpTarget(url: string): McpHttpTarget {
  const r = parseMcpUri(url);
  if (!r.ok || r.target.transport !== 'http') throw new Error(`not an HTTP target: ${url}`);
  return r.target;
}

async function httpHarness(): Promise<Harness> {
  const server: EverythingHttp = await startEverythingHttp();
  const proxy: Proxy = await startProxy(server.port);
  const target = httpTarget(proxy.url);
  const access = mcpHttpAccess(target, { level: 'none', capabilities: { network: { mode: 'allowlist', allowed_hosts: ['127.0.0.1'] } } }, {
    config: { servers: { [proxy.url]: { allow_loopback: true } } },
    resolveSecret: async () => '',
  });
  assert.is(access.problem, undefined);
  const client = new McpClient({ transport: httpTransport({ url: target.url, label: proxy.url, request: access.request, logger, maxFrameBytes: 8 << 20 }), label: proxy.url, clientVersion: '0.1.0', logger });
  return {
    client,
    sent: () => proxy.messages(),
    close: async () => {
      await client.close();
      await proxy.close();
      await server.stop();
    },
  };
}

for (const [name, make] of [['stdio', stdioHarness], ['streamable http', httpHarness]] as const) {
  const test = suite(`mcp client contract (${name})`);
  let h: Harness;
  test.before(async () => {
    h = await make();
  });
  test.after(async () => {
    await h.close();
  });

  test('handshake: the newest protocol version, server info, initialized notification', async () => {
    const info = await h.client.start();
    assert.is(info.protocolVersion, '2025-11-25');
    assert.is(info.serverInfo.name, 'mcp-servers/everything');
    const sent = h.sent();
    assert.is(sent[0].method, 'initialize');
    assert.is(sent[0].params.protocolVersion, '2025-11-25');
    assert.equal(sent[0].params.clientInfo, { name: 'claw-edge', version: '0.1.0' });
    // HTTP: the notification is a POST of its own, answered 202; it may still be on its way.
    for (let i = 0; i < 50 && !h.sent().some((m) => m.method === 'notifications/initialized'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(h.sent().some((m) => m.method === 'notifications/initialized'));
  });

  test('tools/list: echo with its schema', async () => {
    const tools = await h.client.listTools();
    const echo = tools.find((t) => t.name === 'echo')!;
    assert.is(echo.description, 'Echoes back the input string');
    assert.equal(echo.inputSchema.required, ['message']);
    assert.ok(tools.some((t) => t.name === 'get-sum'));
  });

  test('tools/call: exact texts, concurrent calls multiplexed', async () => {
    const [a, b] = await Promise.all([h.client.callTool('echo', { message: 'one' }), h.client.callTool('get-sum', { a: 2, b: 40 })]);
    assert.equal(a, { content: [{ type: 'text', text: 'Echo: one' }], isError: false });
    assert.equal(b.content, [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }]);
  });

  test('bad arguments: the server answers isError with its validation message', async () => {
    const r = await h.client.callTool('get-sum', { a: 'two' });
    assert.is(r.isError, true);
    assert.match(String(r.content[0].text), /Input validation error/);
  });

  test('timeout: McpError timeout, notifications/cancelled names the request, the next call works', async () => {
    const t0 = Date.now();
    const e = await rejection(h.client.callTool('trigger-long-running-operation', { duration: 10, steps: 5 }, { timeoutMs: 400 }));
    assert.instance(e, McpError);
    assert.is(e.code, 'timeout');
    assert.ok(Date.now() - t0 < 3000, `took ${Date.now() - t0} ms`);
    const call = h.sent().find((m) => m.method === 'tools/call' && m.params.name === 'trigger-long-running-operation');
    // HTTP: the cancellation is a POST of its own; give it a moment to reach the proxy.
    for (let i = 0; i < 50 && !h.sent().some((m) => m.method === 'notifications/cancelled'); i++) await new Promise((r) => setTimeout(r, 20));
    const cancel = h.sent().find((m) => m.method === 'notifications/cancelled');
    assert.ok(cancel, 'notifications/cancelled was sent');
    assert.is(cancel.params.requestId, call.id);
    assert.equal((await h.client.callTool('echo', { message: 'after timeout' })).content, [{ type: 'text', text: 'Echo: after timeout' }]);
  });

  test('abort by signal: McpError aborted', async () => {
    const ctl = new AbortController();
    const p = h.client.callTool('trigger-long-running-operation', { duration: 10, steps: 5 }, { signal: ctl.signal });
    setTimeout(() => ctl.abort(new Error('caller gave up')), 200);
    const e = await rejection(p);
    assert.is(e.code, 'aborted');
    assert.match(e.message, /caller gave up/);
  });

  test('close: no restart afterwards', async () => {
    await h.client.close();
    const e = await rejection(h.client.callTool('echo', { message: 'x' }));
    assert.is(e.code, 'closed');
  });

  test.run();
}
