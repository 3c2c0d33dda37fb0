// A hostile or broken MCP server against the client: what it sends is data, never a crash, a leaked
// secret, a held connection or an unbounded buffer on our side. Servers written with node:http (Streamable
// HTTP) or `node -e` (stdio) for the attacks a real server would not make.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { McpClient, TOOL_ANNOTATIONS_MAX_CHARS, TOOL_DESCRIPTION_MAX_CHARS, TOOL_INPUT_SCHEMA_MAX_CHARS, TOOL_OUTPUT_SCHEMA_MAX_CHARS, TOOLS_LIST_MAX_CHARS, TOOLS_LIST_MAX_TOOLS, type McpSpawn } from '../../src/tools/mcp/client.ts';
import { httpTransport } from '../../src/tools/mcp/http-channel.ts';
import { nodeMcpSpawn } from '../../src/tools/mcp/node-spawn.ts';
import { STDERR_LINES_PER_SECOND } from '../../src/tools/mcp/stdio-channel.ts';
import { guardedRequest } from '../../src/net/guarded-fetch.ts';
import { McpPool, createMcpBinder, createMcpToolImpl } from '../../src/tools/mcp/backend.ts';
import { formatStdioUri } from '../../src/tools/mcp/uri.ts';
import type { ToolRunContext } from '../../src/tools/types.ts';
import { captureLogger, NODE, rejection } from '../fixtures/mcp/helpers.ts';
import { fakeMcpHttp } from './helpers/fake-mcp-http.ts';

const test = suite('mcp hostile server');
const TOKEN = 'sk-live-4f9a1c2e7b3d';
const INIT_RESULT = { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'hostile' } };

/** An HTTP MCP server: initialize and DELETE answered here, the rest by `handler`. Counts open sockets. */
async function httpServer(handler: (req: IncomingMessage, body: any, res: ServerResponse) => void, o: { maxFrameBytes?: number; sendTimeoutMs?: number } = {}) {
  const sockets = new Set<Socket>();
  const fake = await fakeMcpHttp(handler, { serverInfo: INIT_RESULT.serverInfo });
  let peak = 0;
  fake.server.on('connection', (sock: Socket) => {
    sockets.add(sock);
    peak = Math.max(peak, sockets.size);
    sock.on('close', () => sockets.delete(sock));
  });
  const url = fake.url;
  const logger = captureLogger();
  const request = (u: string, init: any) => guardedRequest(u, init, { mode: 'allow-all' }, { checkAddress: () => null });
  const transport = httpTransport({ url, label: url, request, logger, maxFrameBytes: o.maxFrameBytes ?? 1 << 20, headers: () => ({ authorization: `Bearer ${TOKEN}` }), sendTimeoutMs: o.sendTimeoutMs ?? 500 });
  const client = new McpClient({ transport, label: url, clientVersion: '1', logger, startTimeoutMs: 5000 });
  return {
    client,
    logger,
    sockets,
    peak: () => peak,
    close: async () => {
      await client.close();
      await fake.close();
    },
  };
}

/** A stdio MCP server from a script: `handle(msg, send, rl)` answers what initialize does not. */
function stdioClient(handle: string, o: { env?: Record<string, string>; spawn?: McpSpawn } = {}) {
  const script = `
    const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
    const handle = ${handle};
    const rl = require('node:readline').createInterface({ input: process.stdin });
    rl.on('line', (l) => {
      const m = JSON.parse(l);
      if (m.method === 'initialize') return send({ jsonrpc: '2.0', id: m.id, result: ${JSON.stringify(INIT_RESULT)} });
      handle(m, send, rl);
    });`;
  const logger = captureLogger();
  const client = new McpClient({ command: NODE, args: ['-e', script], env: o.env ?? {}, spawn: o.spawn ?? nodeMcpSpawn, label: 'hostile-stdio', clientVersion: '1', logger, startTimeoutMs: 5000, closeGraceMs: 200 });
  return { client, logger };
}

const result = (id: unknown, text: string) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });

const deep = (d: number) => '['.repeat(d) + ']'.repeat(d);

test('stdio: a message nested 100,000 levels deep ends the session with a protocol error, not the process', async () => {
  // Before: RangeError (Maximum call stack size exceeded) thrown from the stdout 'data' handler: the runtime died.
  const { client } = stdioClient(`(m, send) => {
    if (m.method !== 'tools/call') return;
    if (m.params.name === 'ok') return send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'fine' }] } });
    process.stdout.write('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":' + '['.repeat(1e5) + ']'.repeat(1e5) + '}}\\n');
    send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'after' }] } });
  }`);
  try {
    const e = await rejection(client.callTool('deep', {}, { timeoutMs: 5000 }));
    assert.is(e.code, 'protocol', e.message);
    assert.match(e.message, /nested deeper than 128 levels/);
    // The next call starts a new server.
    assert.equal((await client.callTool('ok', {}, { timeoutMs: 5000 })).content, [{ type: 'text', text: 'fine' }]);
    assert.is(client.generation, 2);
  } finally {
    await client.close();
  }
});

test('http: a result or a notification nested too deep fails that request (protocol); the session goes on', async () => {
  // Before: the result reached the caller, and JSON.stringify of it (toToolResult, the router) threw RangeError.
  const f = await httpServer((_req, body, res) => {
    if (!('id' in body)) return void res.writeHead(202).end();
    const name = body.params?.name;
    if (name === 'json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(`{"jsonrpc":"2.0","id":${body.id},"result":{"content":[],"structuredContent":${deep(50_000)}}}`);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (name === 'sse') res.write(`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":${deep(50_000)}}}\n\n`);
    res.end(`data: ${JSON.stringify(result(body.id, 'fine'))}\n\n`);
  });
  try {
    for (const name of ['json', 'sse']) {
      const e = await rejection(f.client.callTool(name, {}));
      assert.is(e.code, 'protocol', e.message);
      assert.match(e.message, /nested deeper than 128 levels/);
    }
    assert.equal((await f.client.callTool('ok', {})).content, [{ type: 'text', text: 'fine' }]);
    assert.is(f.client.generation, 1);
  } finally {
    await f.close();
  }
});
test('http: a server that echoes our bearer token in a JSON-RPC error, its data or a result: the token reaches no message, log or result', async () => {
  // Before: the error message (500,119 characters) and error.data both carried the token.
  const f = await httpServer((req, body, res) => {
    if (!('id' in body)) return void res.writeHead(202).end();
    const auth = String(req.headers.authorization);
    res.writeHead(200, { 'content-type': 'application/json' });
    if (body.params?.name === 'echo') return void res.end(JSON.stringify(result(body.id, `you sent ${auth}`)));
    res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32000, message: `bad token ${auth} ${'x'.repeat(500_000)}`, data: { [auth]: [auth] } } }));
  });
  try {
    const e = await rejection(f.client.callTool('fail', {}));
    assert.is(e.code, 'rpc', e.message);
    assert.match(e.message, /bad token \[REDACTED\] x+…$/, e.message.slice(0, 300));
    assert.ok(e.message.length < 1200, `${e.message.length} characters`);
    assert.equal(e.data, { '[REDACTED]': ['[REDACTED]'] });
    const r = await f.client.callTool('echo', {});
    assert.equal(r.content, [{ type: 'text', text: 'you sent [REDACTED]' }]);
    assert.not.ok(JSON.stringify(f.logger.lines).includes(TOKEN));
  } finally {
    await f.close();
  }
});

test('http: notifications answered 400 with a body that never ends hold no connection past the send timeout', async () => {
  // Before: each notifications/cancelled (and initialized) kept its socket open for good: 6 of 6 still open.
  const f = await httpServer((_req, body, res) => {
    if (!('id' in body)) {
      res.writeHead(400, { 'content-type': 'text/plain' });
      return void res.write('no');
    }
    if (body.params?.name === 'ok') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result(body.id, 'ok')));
  });
  try {
    assert.equal((await f.client.callTool('ok', {})).content, [{ type: 'text', text: 'ok' }]);
    for (let i = 0; i < 5; i++) assert.is((await rejection(f.client.callTool('never', {}, { timeoutMs: 20 }))).code, 'timeout');
    // sendTimeoutMs is 500 here; six notifications, four at a time: all done after two rounds.
    await new Promise((r) => setTimeout(r, 1600));
    assert.is(f.sockets.size, 0, `${f.sockets.size} sockets still open`);
    assert.ok(f.logger.lines.some((l) => /did not finish answering notifications\/cancelled within 500 ms/.test(String(l.fields?.error))));
  } finally {
    await f.close();
  }
});

test('stdio: a server that floods requests and never reads its stdin does not grow our write buffer', async () => {
  // Before: 200,000 sampling/createMessage requests left 35 MB of our -32601 answers in the server's stdin buffer.
  let stdin: { writableLength: number } | undefined;
  const spawn: McpSpawn = async (b, a, e, c) => {
    const p = await nodeMcpSpawn(b, a, e, c);
    stdin = p.stdin;
    return p;
  };
  const { client } = stdioClient(
    `(m, send, rl) => {
      if (m.method !== 'tools/call') return;
      rl.close();
      process.stdin.pause();
      let s = '';
      for (let i = 0; i < 2000; i++) s += JSON.stringify({ jsonrpc: '2.0', id: 'p' + i, method: 'sampling/createMessage', params: {} }) + '\\n';
      let n = 0;
      const go = () => (n++ < 100 ? process.stdout.write(s, go) : send({ jsonrpc: '2.0', id: m.id, result: { content: [] } }));
      go();
    }`,
    { spawn },
  );
  try {
    let peak = 0;
    const sample = setInterval(() => (peak = Math.max(peak, stdin?.writableLength ?? 0)), 20);
    const outcome = await client.callTool('flood', {}, { timeoutMs: 2500 }).then(
      () => 'answered',
      (e) => e.code,
    );
    clearInterval(sample);
    peak = Math.max(peak, stdin?.writableLength ?? 0);
    // A server that reads nothing cannot be answered: its call times out (and the server is stopped).
    assert.is(outcome, 'timeout');
    assert.ok(peak < 1 << 20, `${peak} bytes waiting in the server's stdin`);
  } finally {
    await client.close();
  }
});

test('http: 3,000 server requests in one stream are answered through at most 4 POSTs at a time, all of them', async () => {
  // Before: all 3,000 answers were POSTed at once (436 sockets open together); with a 500 ms send timeout none
  // reached the server and 3,000 warn lines were logged.
  let inFlight = 0;
  let peak = 0;
  let answers = 0;
  const f = await httpServer((_req, body, res) => {
    if (!('method' in body)) {
      answers++;
      peak = Math.max(peak, ++inFlight);
      return void setTimeout(() => (inFlight--, res.writeHead(202).end()), 1);
    }
    if (!('id' in body)) return void res.writeHead(202).end();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let s = '';
    for (let i = 0; i < 3000; i++) s += `data: {"jsonrpc":"2.0","id":"p${i}","method":"${i % 2 ? 'ping' : 'roots/list'}"}\n\n`;
    res.end(`${s}data: ${JSON.stringify(result(body.id, 'ok'))}\n\n`);
  });
  try {
    assert.equal((await f.client.callTool('t', {})).content, [{ type: 'text', text: 'ok' }]);
    for (let i = 0; i < 200 && answers < 3000; i++) await new Promise((r) => setTimeout(r, 25));
    assert.is(answers, 3000);
    assert.ok(peak <= 4, `${peak} answers in flight at once`);
    assert.ok(f.peak() <= 6, `${f.peak()} sockets open at once`);
    assert.ok(f.logger.lines.filter((l) => l.level === 'warn').length <= 6);
  } finally {
    await f.close();
  }
});

test('what a server chooses (serverInfo, how many tools and their names) stays bounded in logs and in the not-found result', async () => {
  // Before: a 2,000,160-byte 'mcp server ready' line, one warn line per malformed tool, and a not-found
  // tool result listing every name (line breaks included). 2,000 + 2,000 entries: within TOOLS_LIST_MAX_TOOLS.
  const s = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
      if (req.method === 'DELETE' || !('id' in body)) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's' });
      if (body.method === 'initialize') return void res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { ...INIT_RESULT, serverInfo: { name: 'n'.repeat(2_000_000), version: '1' } } }));
      const tools: unknown[] = [];
      for (let i = 0; i < 2_000; i++) tools.push({ name: `tool_${i}_${'z'.repeat(50)}\n` }, { name: 42 });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { tools } }));
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}/mcp`;
  const logger = captureLogger();
  const request = (u: string, init: any) => guardedRequest(u, init, { mode: 'allow-all' }, { checkAddress: () => null });
  const pool = new McpPool({ clientVersion: '1', logger, http: () => ({ request }), maxFrameBytes: 16 << 20 });
  try {
    const impl = createMcpToolImpl({ uri: url }, { pool, toolName: 'missing' });
    const r = await impl.run({}, { signal: new AbortController().signal } as unknown as ToolRunContext);
    const text = (r.content[0] as { text: string }).text;
    assert.ok(r.isError);
    assert.ok(text.length < 2000, `${text.length} characters`);
    assert.match(text, /has no tool "missing" \(it offers: "tool_0_z+\\n", "tool_1_z+\\n", .* and 1980 more\)$/);
    const lines = logger.lines.map((l) => JSON.stringify(l).length);
    assert.ok(lines.length <= 3, `${lines.length} log lines`);
    assert.ok(Math.max(...lines) < 2000, `a log line of ${Math.max(...lines)} bytes`);
    assert.ok(logger.lines.some((l) => l.msg === 'mcp server listed malformed tools (skipped)' && l.fields?.count === 2_000));
  } finally {
    await pool.closeAll();
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A stdio server whose tools/list has `pages` pages, each from `page(n)` (a JS expression of n), with a fresh cursor. */
const pagingServer = (pages: number, page: string) =>
  stdioClient(`(m, send) => {
    if (m.method !== 'tools/list') return;
    const n = m.params.cursor === undefined ? 0 : Number(m.params.cursor.slice(1));
    const tools = ((n) => ${page})(n);
    send({ jsonrpc: '2.0', id: m.id, result: n + 1 < ${pages} ? { tools, nextCursor: 'c' + (n + 1) } : { tools } });
  }`);

test('stdio: tools/list pages that together exceed TOOLS_LIST_MAX_CHARS are refused (protocol), not accumulated', async () => {
  // 12 pages of 512 KiB of tools (6 MiB). Before: all kept; at 1000 pages of ~8 MiB the heap would be gigabytes.
  const { client } = pagingServer(12, `Array.from({ length: 64 }, (_, i) => ({ name: 't' + n + '_' + i, description: 'd'.repeat(8192), inputSchema: { type: 'object' } }))`);
  try {
    const e = await rejection(client.listTools({ timeoutMs: 10_000 }));
    assert.is(e.code, 'protocol', e.message);
    assert.is(e.message, `MCP server hostile-stdio listed more than ${TOOLS_LIST_MAX_CHARS} characters of tool definitions in tools/list (all pages together)`);
  } finally {
    await client.close();
  }
});

test('stdio: tools/list pages that together list more than TOOLS_LIST_MAX_TOOLS tools are refused (protocol)', async () => {
  // 10 pages of 1,000 small tools. Before: 10,000 tools kept, and described to the model.
  const { client } = pagingServer(10, `Array.from({ length: 1000 }, (_, i) => ({ name: 't' + n + '_' + i }))`);
  try {
    const e = await rejection(client.listTools({ timeoutMs: 10_000 }));
    assert.is(e.code, 'protocol', e.message);
    assert.is(e.message, `MCP server hostile-stdio listed more than ${TOOLS_LIST_MAX_TOOLS} tools in tools/list (all pages together)`);
  } finally {
    await client.close();
  }
});

test('stdio: tools/list within its bounds across pages is kept whole; a repeated cursor is refused', async () => {
  const ok = pagingServer(4, `Array.from({ length: 500 }, (_, i) => ({ name: 't' + n + '_' + i }))`);
  try {
    assert.is((await ok.client.listTools({ timeoutMs: 10_000 })).length, 2000);
  } finally {
    await ok.client.close();
  }
  const { client } = stdioClient(`(m, send) => {
    if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'a' }], nextCursor: 'x' } });
  }`);
  try {
    const e = await rejection(client.listTools({ timeoutMs: 10_000 }));
    assert.is(e.code, 'protocol', e.message);
    assert.match(e.message, /repeated tools\/list cursor "x"/);
  } finally {
    await client.close();
  }
});

/** A stdio server listing one tool with a 1 MB description, a 100 KB title and a ~200 KB input schema, and one ordinary tool. */
const BIG_TOOLS_SERVER = `
  const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
  require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => {
    const m = JSON.parse(l);
    if (m.method === 'initialize') return send({ jsonrpc: '2.0', id: m.id, result: ${JSON.stringify(INIT_RESULT)} });
    if (m.method !== 'tools/list') return;
    const big = { name: 'big', title: 'T'.repeat(1e5), description: 'D'.repeat(1e6), inputSchema: { type: 'object', properties: { a: { type: 'string', description: 'x'.repeat(2e5) } } } };
    send({ jsonrpc: '2.0', id: m.id, result: { tools: [big, { name: 'fine', description: 'ok', inputSchema: { type: 'object' } }] } });
  });`;

test('stdio: a huge tool description and title are clipped with a marker; a huge input schema is not kept (one warn line)', async () => {
  // Before: the 1,000,000-character description and the 200 KB schema were kept whole, for the model's every turn.
  const logger = captureLogger();
  const client = new McpClient({ command: NODE, args: ['-e', BIG_TOOLS_SERVER], env: {}, spawn: nodeMcpSpawn, label: 'big-stdio', clientVersion: '1', logger, startTimeoutMs: 5000, closeGraceMs: 200 });
  try {
    const [big, fine] = await client.listTools({ timeoutMs: 10_000 });
    assert.is(big.description, `${'D'.repeat(TOOL_DESCRIPTION_MAX_CHARS)}… [clipped by claw-edge: ${1e6 - TOOL_DESCRIPTION_MAX_CHARS} more characters]`);
    assert.is(big.title, `${'T'.repeat(TOOL_DESCRIPTION_MAX_CHARS)}… [clipped by claw-edge: ${1e5 - TOOL_DESCRIPTION_MAX_CHARS} more characters]`);
    assert.equal(big.inputSchema, { type: 'object' });
    assert.ok(big.inputSchemaOversize! > TOOL_INPUT_SCHEMA_MAX_CHARS, String(big.inputSchemaOversize));
    assert.equal(fine, { name: 'fine', description: 'ok', inputSchema: { type: 'object' } });
    const warns = logger.lines.filter((l) => l.level === 'warn');
    assert.is(warns.length, 1);
    assert.equal(warns[0].fields, { server: 'big-stdio', count: 1, first: 'big', chars: big.inputSchemaOversize, limit: TOOL_INPUT_SCHEMA_MAX_CHARS });
  } finally {
    await client.close();
  }
});

test('stdio: a huge output schema or annotations are not kept, the tool stays listed (one warn line); small ones are kept', async () => {
  // Before: they were kept whole in the tools cache, bounded only by the whole listing's 4 MB.
  const { client, logger } = stdioClient(`(m, send) => {
    if (m.method !== 'tools/list') return;
    const bigOut = { name: 'big-out', inputSchema: { type: 'object' }, outputSchema: { type: 'object', description: 'o'.repeat(2e5) }, annotations: { readOnlyHint: true } };
    const bigAnn = { name: 'big-ann', inputSchema: { type: 'object' }, annotations: { title: 'a'.repeat(1e4) } };
    const fine = { name: 'fine', inputSchema: { type: 'object' }, outputSchema: { type: 'object' }, annotations: { readOnlyHint: true } };
    send({ jsonrpc: '2.0', id: m.id, result: { tools: [bigOut, bigAnn, fine] } });
  }`);
  try {
    const [bigOut, bigAnn, fine] = await client.listTools({ timeoutMs: 10_000 });
    assert.equal(bigOut, { name: 'big-out', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true }, notKept: ['outputSchema'] });
    assert.equal(bigAnn, { name: 'big-ann', inputSchema: { type: 'object' }, notKept: ['annotations'] });
    assert.equal(fine, { name: 'fine', inputSchema: { type: 'object' }, outputSchema: { type: 'object' }, annotations: { readOnlyHint: true } });
    const warns = logger.lines.filter((l) => l.level === 'warn');
    assert.is(warns.length, 1);
    assert.equal(warns[0].fields, { server: 'hostile-stdio', count: 2, first: 'big-out', fields: ['outputSchema'], limits: { outputSchema: TOOL_OUTPUT_SCHEMA_MAX_CHARS, annotations: TOOL_ANNOTATIONS_MAX_CHARS } });
  } finally {
    await client.close();
  }
});

test('binder: a tool whose input schema the server made too large is refused unless the manifest declares input_schema', async () => {
  // Before: bind() took the ~200 KB schema (and the 1 MB description) from tools/list for the model.
  const pool = new McpPool({ spawn: nodeMcpSpawn, env: {}, clientVersion: '1', logger: captureLogger() });
  const uri = formatStdioUri(NODE, ['-e', BIG_TOOLS_SERVER]);
  const binder = createMcpBinder(pool);
  try {
    const e = await rejection(binder.bind({ name: 'big', spec: { mcp_source: { uri } } } as any));
    assert.is(e.code, 'protocol', e.message);
    assert.match(e.message, /^tool big: MCP server stdio:.* gave tool "big" an input schema of \d+ characters, more than 65536: declare input_schema in the manifest$/);
    const declared = await binder.bind({ name: 'big', spec: { input_schema: { type: 'object' }, mcp_source: { uri } } } as any);
    assert.is(declared.description!.length, TOOL_DESCRIPTION_MAX_CHARS + `… [clipped by claw-edge: ${1e6 - TOOL_DESCRIPTION_MAX_CHARS} more characters]`.length);
  } finally {
    await binder.close();
  }
});

test('stdio: 100,000 lines of server stderr log at most STDERR_LINES_PER_SECOND a second, the rest counted; the loop keeps turning', async () => {
  // Before: 100,000 debug lines, one per stderr line.
  const { client, logger } = stdioClient(`(m, send) => {
    if (m.method !== 'tools/call') return;
    process.stderr.write(('e'.repeat(50) + '\\n').repeat(100000), () => send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'done' }] } }));
  }`);
  let last = Date.now();
  let maxGap = 0;
  const tick = setInterval(() => {
    const t = Date.now();
    maxGap = Math.max(maxGap, t - last);
    last = t;
  }, 5);
  const started = Date.now();
  try {
    assert.equal((await client.callTool('flood', {}, { timeoutMs: 20_000 })).content, [{ type: 'text', text: 'done' }]);
  } finally {
    clearInterval(tick);
    await client.close();
  }
  const seconds = Math.ceil((Date.now() - started) / 1000) + 1;
  const logged = logger.lines.filter((l) => l.msg === 'mcp server stderr').length;
  const suppressed = logger.lines.filter((l) => l.msg === 'mcp server stderr: lines suppressed').reduce((n, l) => n + (l.fields!.suppressed as number), 0);
  assert.ok(logged <= STDERR_LINES_PER_SECOND * seconds, `${logged} stderr lines logged in ${seconds} s`);
  assert.is(logged + suppressed, 100_000, 'every line is either logged or counted');
  assert.ok(maxGap < 1000, `the event loop stood still for ${maxGap} ms`);
});

test('stdio: a backward step of the wall clock does not silence the server\'s stderr', async () => {
  // Before: the window was measured on Date.now(): after the clock stepped back an hour, no window opened
  // until it caught up, and every stderr line in between was suppressed.
  // The stub goes in before the client exists, so that a clock captured at construction is the stubbed one.
  const realNow = Date.now;
  let offset = 0;
  Date.now = () => realNow() + offset;
  const { client, logger } = stdioClient(`(m, send) => {
    if (m.method !== 'tools/call') return;
    process.stderr.write(('line ' + m.id + '\\n').repeat(30), () => send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'done' }] } }));
  }`);
  const stderrLines = () => logger.lines.filter((l) => l.msg === 'mcp server stderr').length;
  try {
    await client.callTool('chatty', {}, { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 200)); // the stderr pipe may trail the reply
    const first = stderrLines();
    assert.ok(first >= 1 && first <= STDERR_LINES_PER_SECOND, `${first} lines logged from the first call`);
    offset = -3_600_000;
    await new Promise((r) => setTimeout(r, 1100));
    await client.callTool('chatty', {}, { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(stderrLines() - first >= STDERR_LINES_PER_SECOND, `${stderrLines() - first} lines logged from the second call, a second later`);
  } finally {
    Date.now = realNow;
    await client.close();
  }
});

test('http: an event stream the server keeps open after its response holds no connection', async () => {
  // Before: the stream was read until the server ended it: each call left one socket open for good (5 of 5).
  const f = await httpServer((_req, body, res) => {
    if (!('id' in body)) return void res.writeHead(202).end();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(result(body.id, 'ok'))}\n\n: still here\n\n`);
  });
  try {
    for (let i = 0; i < 5; i++) assert.equal((await f.client.callTool('t', {})).content, [{ type: 'text', text: 'ok' }]);
    await new Promise((r) => setTimeout(r, 300));
    assert.is(f.sockets.size, 0, `${f.sockets.size} sockets still open`);
  } finally {
    await f.close();
  }
});

test.run();
