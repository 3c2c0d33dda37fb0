// McpClient edge cases against a scripted server (test/fixtures/mcp/fake-server.mjs).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { McpClient, MCP_PROTOCOL_VERSIONS, type McpClientOptions } from '../../src/tools/mcp/client.ts';
import { McpError } from '../../src/tools/mcp/errors.ts';
import { minimalMcpEnv, nodeMcpSpawn } from '../../src/tools/mcp/node-spawn.ts';
import { FAKE_SERVER, NODE, captureLogger, isAlive, liveInGroup, recordingSpawn, rejection, sleep } from '../fixtures/mcp/helpers.ts';

const test = suite('mcp client (fake server)');
const open: McpClient[] = [];
function fake(mode = 'normal', extra: Partial<McpClientOptions> = {}) {
  const logger = captureLogger();
  const rec = recordingSpawn();
  const client = new McpClient({ command: NODE, args: [FAKE_SERVER, mode], env: minimalMcpEnv(process.env), spawn: rec.spawn, clientVersion: '9.9.9', logger, label: `fake:${mode}`, ...extra });
  open.push(client);
  return { client, logger, rec };
}
test.after.each(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

test('handshake: newest version sent, clientInfo, then notifications/initialized', async () => {
  const { client, rec } = fake();
  const info = await client.start();
  assert.is(info.protocolVersion, MCP_PROTOCOL_VERSIONS[0]);
  assert.equal(info.serverInfo, { name: 'fake', version: '0.0.1' });
  await client.listTools(); // makes sure initialized went out before
  const [init, initialized] = rec.written as any[];
  assert.equal(init, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'claw-edge', version: '9.9.9' } },
  });
  assert.equal(initialized, { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.is(client.generation, 1);
});

test('an older version we speak is accepted', async () => {
  const { client } = fake('old-version');
  assert.is((await client.start()).protocolVersion, '2024-11-05');
  assert.equal((await client.callTool('echo', { text: 'hi' })).content, [{ type: 'text', text: 'echo:hi' }]);
});

test('unknown protocol version in the answer: clear error, server stopped', async () => {
  const { client, rec } = fake('bad-version');
  const e = await rejection(client.start());
  assert.instance(e, McpError);
  assert.is(e.code, 'version');
  assert.match(e.message, /"1999-01-01"/);
  assert.match(e.message, /2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05/);
  assert.is(isAlive(rec.pids[0]), false);
  assert.not.ok(rec.written.some((m: any) => m.method === 'notifications/initialized'));
});

test('tools/list follows nextCursor across pages', async () => {
  const { client, rec } = fake();
  const tools = await client.listTools();
  assert.equal(
    tools.map((t) => t.name),
    ['echo', 'ping-client', 'roots', 'garbage', 'big', 'sleep', 'crash', 'mixed', 'structured', 'fails', 'rpc-error', 'notify'],
  );
  assert.equal(tools[0], { name: 'echo', description: 'fake echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } });
  const lists = (rec.written as any[]).filter((m) => m.method === 'tools/list').map((m) => m.params);
  assert.equal(lists, [{}, { cursor: 'page-2' }, { cursor: 'page-3' }, { cursor: 'page-4' }, { cursor: 'page-5' }, { cursor: 'page-6' }]);
});

test('server→client ping is answered with {}', async () => {
  const { client } = fake();
  const r = await client.callTool('ping-client', {});
  assert.equal(r.content, [{ type: 'text', text: 'pong:{"jsonrpc":"2.0","id":"srv-1","result":{}}' }]);
});

test('server→client roots/list gets a -32601 error', async () => {
  const { client } = fake();
  const r = await client.callTool('roots', {});
  const answer = JSON.parse((r.content[0].text as string).slice('roots:'.length));
  assert.is(answer.id, 'srv-1');
  assert.is(answer.error.code, -32601);
  assert.match(answer.error.message, /roots\/list/);
});

test('garbage, unknown ids and string ids on stdout are ignored; the real answer wins', async () => {
  const { client, logger } = fake();
  const r = await client.callTool('garbage', {});
  assert.equal(r, { content: [{ type: 'text', text: 'survived' }], isError: false });
  const warns = logger.lines.filter((l) => l.level === 'warn').map((l) => l.msg);
  assert.ok(warns.includes('mcp server wrote a non-JSON-RPC line on stdout (ignored)'));
  assert.is(warns.filter((w) => w.startsWith('mcp server sent a response with an id we are not waiting for')).length, 2);
});

test('a banner line before the handshake does not break it', async () => {
  const { client, logger } = fake('banner');
  assert.equal((await client.callTool('echo', { text: 'x' })).content, [{ type: 'text', text: 'echo:x' }]);
  assert.ok(logger.lines.some((l) => l.fields?.line === 'Welcome to the chatty fake server v1!'));
});

test('oversize frame: protocol error, server stopped, next call restarts it', async () => {
  const { client, rec } = fake('normal', { maxFrameBytes: 64 * 1024 });
  const e = await rejection(client.callTool('big', { bytes: 200_000 }));
  assert.instance(e, McpError);
  assert.is(e.code, 'protocol');
  assert.match(e.message, /over the 65536-byte frame limit/);
  assert.is(isAlive(rec.pids[0]), false);
  assert.equal((await client.callTool('big', { bytes: 1000 })).content[0].text, 'x'.repeat(1000));
  assert.is(client.generation, 2);
});

test('timeout: notifications/cancelled sent, whole process group killed, then lazy restart', async () => {
  const { client, rec, logger } = fake();
  await client.start();
  const pgid = client.pid!;
  const t0 = Date.now();
  const e = await rejection(client.callTool('sleep', {}, { timeoutMs: 300 }));
  assert.instance(e, McpError);
  assert.is(e.code, 'timeout');
  assert.match(e.message, /timed out after 300 ms/);
  assert.ok(Date.now() - t0 < 3000);
  const call = (rec.written as any[]).find((m) => m.method === 'tools/call');
  const cancel = (rec.written as any[]).find((m) => m.method === 'notifications/cancelled');
  assert.equal(cancel, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: call.id, reason: 'timed out after 300 ms' } });
  // By the time the call rejected, nothing of the group (server + its grandchild) is running.
  assert.equal(liveInGroup(pgid), []);
  const grandchild = Number(/grandchild (\d+)/.exec(logger.lines.map((l) => String(l.fields?.line ?? '')).join('\n'))?.[1]);
  assert.ok(grandchild > 0, 'the server had started a grandchild');
  assert.is(isAlive(grandchild), false);
  assert.is(client.pid, undefined);
  assert.equal((await client.callTool('echo', { text: 'again' })).content, [{ type: 'text', text: 'echo:again' }]);
  assert.is(client.generation, 2);
  assert.is.not(client.pid, pgid);
});

test('abort via AbortSignal: code aborted, reason forwarded, other pending calls fail as stopped', async () => {
  const { client, rec } = fake();
  await client.start();
  const ac = new AbortController();
  const victim = client.callTool('sleep', {}, { signal: ac.signal });
  const bystander = client.callTool('sleep', {});
  await sleep(100);
  ac.abort(new Error('agent stopping'));
  const [e1, e2] = await Promise.all([rejection(victim), rejection(bystander)]);
  assert.is(e1.code, 'aborted');
  assert.match(e1.message, /agent stopping/);
  assert.is(e2.code, 'stopped');
  assert.match(e2.message, /was stopped because tools\/call "sleep" \(request \d+\) was aborted/);
  const cancel = (rec.written as any[]).find((m) => m.method === 'notifications/cancelled');
  assert.is(cancel.params.reason, 'agent stopping');
});

test('AbortSignal.timeout reason maps to code timeout', async () => {
  const { client } = fake();
  await client.start();
  const e = await rejection(client.callTool('sleep', {}, { signal: AbortSignal.timeout(200) }));
  assert.is(e.code, 'timeout');
});

test('already-aborted signal: nothing sent, server kept', async () => {
  const { client, rec } = fake();
  await client.start();
  const ac = new AbortController();
  ac.abort();
  const e = await rejection(client.callTool('echo', { text: 'x' }, { signal: ac.signal }));
  assert.is(e.code, 'aborted');
  assert.not.ok((rec.written as any[]).some((m) => m.method === 'tools/call'));
  assert.is(client.generation, 1);
  assert.ok(client.pid !== undefined);
});

test('server crash mid-call: clear error with exit code and stderr; next call restarts', async () => {
  const { client } = fake();
  const e = await rejection(client.callTool('crash', {}));
  assert.instance(e, McpError);
  assert.is(e.code, 'crashed');
  assert.match(e.message, /exited unexpectedly \(exit code 3\) while tools\/call "crash" was pending/);
  assert.match(e.message, /server stderr: fatal: kaboom/);
  assert.equal((await client.callTool('echo', { text: 'back' })).content, [{ type: 'text', text: 'echo:back' }]);
  assert.is(client.generation, 2);
});

test('server that exits before answering initialize: error carries its stderr', async () => {
  const { client } = fake('exit-at-start');
  const e = await rejection(client.start());
  assert.is(e.code, 'crashed');
  assert.match(e.message, /exit code 2/);
  assert.match(e.message, /cannot open config: \/nope/);
});

test('server that never answers initialize: start timeout, stopped', async () => {
  const { client, rec } = fake('no-init', { startTimeoutMs: 300 });
  const e = await rejection(client.start());
  assert.is(e.code, 'timeout');
  assert.not.ok((rec.written as any[]).some((m) => m.method === 'notifications/cancelled'), 'initialize is never cancelled');
  assert.is(isAlive(rec.pids[0]), false);
});

test('executable that does not exist: spawn error', async () => {
  const client = new McpClient({ command: '/nonexistent/mcp-server', spawn: nodeMcpSpawn, clientVersion: '1' });
  open.push(client);
  const e = await rejection(client.start());
  assert.is(e.code, 'spawn');
  assert.match(e.message, /could not start MCP server \/nonexistent\/mcp-server: .*ENOENT/);
});

test('isError, JSON-RPC errors and structuredContent come through', async () => {
  const { client } = fake();
  assert.equal(await client.callTool('fails', {}), { content: [{ type: 'text', text: 'disk full' }], isError: true });
  assert.equal(await client.callTool('structured', {}), { content: [], isError: false, structuredContent: { temperature: 21.5 } });
  const e = await rejection(client.callTool('rpc-error', {}));
  assert.is(e.code, 'rpc');
  assert.is(e.rpcCode, -32602);
  assert.match(e.message, /answered tools\/call "rpc-error" with error -32602: Invalid params: path is required/);
  assert.is(client.generation, 1, 'a JSON-RPC error does not restart the server');
});

test('server notifications are logged; log levels mapped', async () => {
  const { client, logger } = fake();
  await client.callTool('notify', {});
  assert.ok(logger.lines.some((l) => l.level === 'warn' && l.msg === 'mcp server log' && l.fields?.data === 'careful'));
  assert.ok(logger.lines.some((l) => l.level === 'debug' && l.fields?.method === 'notifications/progress'));
});

test('concurrent calls share one server; ids are distinct', async () => {
  const { client, rec } = fake();
  const rs = await Promise.all(['a', 'b', 'c', 'd'].map((t) => client.callTool('echo', { text: t })));
  assert.equal(rs.map((r) => r.content[0].text), ['echo:a', 'echo:b', 'echo:c', 'echo:d']);
  assert.is(rec.pids.length, 1);
  const ids = (rec.written as any[]).filter((m) => m.id !== undefined).map((m) => m.id);
  assert.is(new Set(ids).size, ids.length);
  assert.ok(ids.every((i) => Number.isInteger(i)));
});

test('close(): server gone, no restart afterwards', async () => {
  const { client, rec } = fake();
  await client.start();
  await client.close();
  assert.is(isAlive(rec.pids[0]), false);
  const e = await rejection(client.callTool('echo', { text: 'x' }));
  assert.is(e.code, 'closed');
});

test.run();
