// MCP-backed ToolImpl: pool sharing, describe() from tools/list, result mapping, errors.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { McpPool, createMcpBinder, createMcpToolImpl, toToolResult } from '../../src/tools/mcp/backend.ts';
import { McpError } from '../../src/tools/mcp/errors.ts';
import { formatStdioUri } from '../../src/tools/mcp/uri.ts';
import { minimalMcpEnv } from '../../src/tools/mcp/node-spawn.ts';
import type { ToolRunContext } from '../../src/tools/types.ts';
import { EVERYTHING_SERVER, FAKE_SERVER, NODE, captureLogger, liveInGroup, recordingSpawn, rejection, sleep } from '../fixtures/mcp/helpers.ts';

const test = suite('mcp backend');
const rec = recordingSpawn();
const pool = new McpPool({ spawn: rec.spawn, env: minimalMcpEnv(process.env), clientVersion: '0.1.0', logger: captureLogger() });
const EVERYTHING = formatStdioUri(NODE, [EVERYTHING_SERVER, 'stdio']);
const FAKE = formatStdioUri(NODE, [FAKE_SERVER, 'normal']);
const ctx = (signal: AbortSignal = new AbortController().signal): ToolRunContext => ({ signal, requestId: 'r-1' }) as ToolRunContext;

test.after(async () => {
  await pool.closeAll();
});

test('tools on the same server share one client and one process; describe() from tools/list', async () => {
  const echo = createMcpToolImpl({ uri: EVERYTHING, tool_name: 'echo' }, { pool, toolName: 'say' });
  const sum = createMcpToolImpl({ uri: EVERYTHING, tool_name: 'get-sum' }, { pool, toolName: 'add' });
  assert.is(echo.kind, 'mcp');
  assert.is(echo.touchesOs, true);
  assert.is(echo.client, sum.client);
  assert.is(pool.size, 1);
  const d = await echo.describe();
  assert.equal(d, {
    description: 'Echoes back the input string',
    inputSchema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { message: { type: 'string', description: 'Message to echo' } },
      required: ['message'],
    },
    title: 'Echo Tool',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  });
  assert.equal(await echo.run({ message: 'hi' }, ctx()), { content: [{ type: 'text', text: 'Echo: hi' }] });
  assert.equal(await sum.run({ a: 1, b: 2 }, ctx()), { content: [{ type: 'text', text: 'The sum of 1 and 2 is 3.' }] });
  assert.is(echo.client.generation, 1);
  // Releasing one keeps the server for the other; the last release closes it.
  await echo.close!();
  assert.is(pool.size, 1);
  assert.equal((await sum.run({ a: 2, b: 2 }, ctx())).content, [{ type: 'text', text: 'The sum of 2 and 2 is 4.' }]);
  const pid = sum.client.pid!;
  await sum.close!();
  assert.is(pool.size, 0);
  assert.equal(liveInGroup(pid), []);
});

test('image blocks from the real server are kept', async () => {
  const img = createMcpToolImpl({ uri: EVERYTHING, tool_name: 'get-tiny-image' }, { pool, toolName: 'img' });
  const r = await img.run({}, ctx());
  const kinds = r.content.map((b) => b.type);
  assert.ok(kinds.includes('image'));
  const image = r.content.find((b) => b.type === 'image') as { mimeType: string; data: string };
  assert.is(image.mimeType, 'image/png');
  assert.ok(image.data.startsWith('iVBORw0KGgo'));
  await img.close!();
});

test('without tool_name the manifest tool name is the MCP tool name', async () => {
  const t = createMcpToolImpl({ uri: EVERYTHING }, { pool, toolName: 'echo' });
  assert.is(t.mcpToolName, 'echo');
  assert.equal((await t.run({ message: 'x' }, ctx())).content, [{ type: 'text', text: 'Echo: x' }]);
  await t.close!();
});

test('a tool the server does not have: describe() throws tool-not-found; run() is an isError result', async () => {
  const t = createMcpToolImpl({ uri: FAKE, tool_name: 'read_file' }, { pool, toolName: 'reader' });
  const e = await rejection(t.describe());
  assert.instance(e, McpError);
  assert.is(e.code, 'tool-not-found');
  assert.match(e.message, /MCP server stdio:\/\/\/.+ has no tool "read_file" \(it offers: "echo", "ping-client", "roots", /);
  const r = await t.run({}, ctx());
  assert.is(r.isError, true);
  assert.match((r.content[0] as { text: string }).text, /has no tool "read_file"/);
  await t.close!();
});

test('content mapping: text, image, resource, resource_link, audio, unknown, malformed', async () => {
  const t = createMcpToolImpl({ uri: FAKE, tool_name: 'mixed' }, { pool, toolName: 'mixed' });
  assert.equal(await t.run({}, ctx()), {
    content: [
      { type: 'text', text: 'hello' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      { type: 'text', text: '[audio content omitted (audio/wav, 3 bytes): claw-edge tool results carry text, image and resource blocks]' },
      { type: 'resource', resource: { uri: 'file:///tmp/a.txt', mimeType: 'text/plain', text: 'A' } },
      { type: 'resource', resource: { uri: 'file:///tmp/b.txt', name: 'b.txt', mimeType: 'text/plain' } },
      { type: 'text', text: '[unsupported MCP content type "hologram" omitted]' },
      { type: 'text', text: '[malformed MCP "text" content block omitted]' },
    ],
  });
  await t.close!();
});

test('isError results, JSON-RPC errors and structuredContent-only results', async () => {
  const fails = createMcpToolImpl({ uri: FAKE, tool_name: 'fails' }, { pool, toolName: 'a' });
  const rpc = createMcpToolImpl({ uri: FAKE, tool_name: 'rpc-error' }, { pool, toolName: 'b' });
  const st = createMcpToolImpl({ uri: FAKE, tool_name: 'structured' }, { pool, toolName: 'c' });
  assert.equal(await fails.run({}, ctx()), { content: [{ type: 'text', text: 'disk full' }], isError: true });
  const r = await rpc.run({}, ctx());
  assert.is(r.isError, true);
  assert.match((r.content[0] as { text: string }).text, /^MCP tool "rpc-error" on stdio:.+ failed: .*error -32602: Invalid params: path is required$/);
  assert.equal(await st.run({}, ctx()), { content: [{ type: 'text', text: '{"temperature":21.5}' }] });
  assert.equal(toToolResult({ content: [], isError: false }), { content: [] });
  await Promise.all([fails.close!(), rpc.close!(), st.close!()]);
});

test('abort during run: throws McpError aborted after the server is gone; next run restarts', async () => {
  const sleeper = createMcpToolImpl({ uri: FAKE, tool_name: 'sleep' }, { pool, toolName: 'sleeper' });
  const echo = createMcpToolImpl({ uri: FAKE, tool_name: 'echo' }, { pool, toolName: 'echo' });
  await echo.run({ text: 'warm' }, ctx());
  const pgid = echo.client.pid!;
  const ac = new AbortController();
  const p = sleeper.run({}, ctx(ac.signal));
  await sleep(150);
  ac.abort(new Error('timeout'));
  const e = await rejection(p);
  assert.instance(e, McpError);
  assert.is(e.code, 'aborted');
  assert.equal(liveInGroup(pgid), []);
  assert.equal((await echo.run({ text: 'back' }, ctx())).content, [{ type: 'text', text: 'echo:back' }]);
  await Promise.all([sleeper.close!(), echo.close!()]);
});

test('partitions (sandbox_ref) keep servers apart; spawnFor picks the spawner per partition', async () => {
  const seen: string[] = [];
  const p2 = new McpPool({ spawn: rec.spawn, spawnFor: (part) => (seen.push(part), rec.spawn), env: minimalMcpEnv(process.env), clientVersion: '0.1.0' });
  const binder = createMcpBinder(p2);
  const a = await binder.bind({ name: 'a', spec: { mcp_source: { uri: FAKE, tool_name: 'echo' }, sandbox_ref: 'strict' } } as any);
  const b = await binder.bind({ name: 'b', spec: { mcp_source: { uri: FAKE, tool_name: 'echo' }, sandbox_ref: 'loose' } } as any);
  const c = await binder.bind({ name: 'c', spec: { mcp_source: { uri: FAKE, tool_name: 'echo' }, sandbox_ref: 'strict' } } as any);
  assert.is(p2.size, 2);
  assert.equal(seen, ['sandbox:strict', 'sandbox:loose']);
  assert.is((a.impl as any).client, (c.impl as any).client);
  assert.is.not((a.impl as any).client, (b.impl as any).client);
  await binder.close();
  assert.is(p2.size, 0);
});

test('bad URIs fail at creation', () => {
  for (const [uri, code] of [['mcp://github', 'config'], ['https://mcp.example.com/x', 'unsupported-transport'], ['stdio://host/x', 'config']] as const) {
    try {
      createMcpToolImpl({ uri }, { pool, toolName: 't' });
      assert.unreachable(`${uri} accepted`);
    } catch (e) {
      assert.instance(e, McpError);
      assert.is((e as McpError).code, code);
    }
  }
  assert.is(pool.size, 0);
});

test('binder: fills description/input_schema from the server only when the manifest lacks them', async () => {
  const binder = createMcpBinder(pool);
  const spawnsBefore = rec.pids.length;
  const full = await binder.bind({ name: 'say', spec: { description: 'mine', input_schema: { type: 'object' }, mcp_source: { uri: EVERYTHING, tool_name: 'echo' } } } as any);
  assert.equal(Object.keys(full), ['impl']);
  assert.is(rec.pids.length, spawnsBefore, 'no server started for a fully described tool');
  const partial = await binder.bind({ name: 'say2', spec: { mcp_source: { uri: EVERYTHING, tool_name: 'echo' } } } as any);
  assert.is(partial.description, 'Echoes back the input string');
  assert.equal((partial.inputSchema as any).required, ['message']);
  const e = await rejection(binder.bind({ name: 'ghost', spec: { mcp_source: { uri: EVERYTHING, tool_name: 'nope' } } } as any));
  assert.is(e.code, 'tool-not-found');
  assert.match(e.message, /^tool ghost: MCP server .* has no tool "nope"/);
  await binder.close();
  assert.is(pool.size, 0);
});

test.run();
