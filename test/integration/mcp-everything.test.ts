// The client against a real MCP server from npm: @modelcontextprotocol/server-everything
// (devDependency), run as `node .../dist/index.js stdio`.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { McpClient } from '../../src/tools/mcp/client.ts';
import { McpError } from '../../src/tools/mcp/errors.ts';
import { minimalMcpEnv } from '../../src/tools/mcp/node-spawn.ts';
import { EVERYTHING_SERVER, NODE, captureLogger, liveInGroup, recordingSpawn, rejection, sleep } from '../fixtures/mcp/helpers.ts';

const test = suite('mcp client (server-everything)');
const rec = recordingSpawn();
const logger = captureLogger();
const client = new McpClient({ command: NODE, args: [EVERYTHING_SERVER, 'stdio'], env: minimalMcpEnv(process.env), spawn: rec.spawn, clientVersion: '0.1.0', logger, label: 'everything' });
test.after(async () => {
  await client.close();
});

test('handshake with the real server', async () => {
  const info = await client.start();
  assert.is(info.protocolVersion, '2025-11-25');
  assert.is(info.serverInfo.name, 'mcp-servers/everything');
  assert.ok('tools' in info.capabilities);
  assert.is(client.generation, 1);
});

test('tools/list: exact names of the always-on tools, and echo\'s schema', async () => {
  const tools = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ['echo', 'get-annotated-message', 'get-env', 'get-resource-links', 'get-resource-reference', 'get-structured-content', 'get-sum', 'get-tiny-image', 'gzip-file-as-resource', 'toggle-simulated-logging', 'toggle-subscriber-updates', 'trigger-long-running-operation']) {
    assert.ok(names.includes(n), `missing ${n}`);
  }
  const echo = tools.find((t) => t.name === 'echo')!;
  assert.is(echo.description, 'Echoes back the input string');
  assert.is(echo.title, 'Echo Tool');
  assert.equal(echo.inputSchema, {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { message: { type: 'string', description: 'Message to echo' } },
    required: ['message'],
  });
  assert.equal(echo.annotations, { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
});

test('tools/call echo and get-sum: exact texts', async () => {
  assert.equal(await client.callTool('echo', { message: 'hello edge' }), { content: [{ type: 'text', text: 'Echo: hello edge' }], isError: false });
  const sum = await client.callTool('get-sum', { a: 2, b: 40 });
  assert.equal(sum.content, [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }]);
});

test('invalid arguments: the server answers isError with its validation message', async () => {
  const r = await client.callTool('get-sum', { a: 'two' });
  assert.is(r.isError, true);
  assert.match(String(r.content[0].text), /Input validation error/);
});

test('timeout on trigger-long-running-operation: cancelled, process group gone, next call restarts', async () => {
  const pgid = client.pid!;
  assert.ok(pgid > 0);
  const e = await rejection(client.callTool('trigger-long-running-operation', { duration: 10, steps: 5 }, { timeoutMs: 500 }));
  assert.instance(e, McpError);
  assert.is(e.code, 'timeout');
  const call = (rec.written as any[]).find((m) => m.method === 'tools/call' && m.params.name === 'trigger-long-running-operation');
  assert.ok((rec.written as any[]).some((m) => m.method === 'notifications/cancelled' && m.params.requestId === call.id));
  assert.equal(liveInGroup(pgid), []);
  // Transparent restart: new process, new handshake, call succeeds.
  assert.equal((await client.callTool('echo', { message: 'after restart' })).content, [{ type: 'text', text: 'Echo: after restart' }]);
  assert.is(client.generation, 2);
  assert.is.not(client.pid, pgid);
  assert.is((rec.written as any[]).filter((m) => m.method === 'initialize').length, 2);
});

test('short long-running operation completes with the exact text', async () => {
  const r = await client.callTool('trigger-long-running-operation', { duration: 0.2, steps: 2 }, { timeoutMs: 5000 });
  assert.equal(r.content, [{ type: 'text', text: 'Long running operation completed. Duration: 0.2 seconds, Steps: 2.' }]);
});

test('server killed mid-call: clear crash error; the next call restarts it', async () => {
  const before = client.generation;
  const pid = client.pid!;
  const pending = client.callTool('trigger-long-running-operation', { duration: 10, steps: 5 });
  await sleep(200);
  process.kill(pid, 'SIGKILL');
  const e = await rejection(pending);
  assert.instance(e, McpError);
  assert.is(e.code, 'crashed');
  assert.match(e.message, /MCP server everything exited unexpectedly \(killed by signal SIGKILL\) while tools\/call "trigger-long-running-operation" was pending/);
  assert.equal((await client.callTool('echo', { message: 'alive' })).content, [{ type: 'text', text: 'Echo: alive' }]);
  assert.is(client.generation, before + 1);
});

test.run();
