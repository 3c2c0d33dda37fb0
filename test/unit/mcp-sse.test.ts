// What the MCP Streamable HTTP transport does with an event stream: priming events, resumption with
// Last-Event-ID, an oversize event. The parser itself (src/protocol/sse.ts) has test/unit/sse.test.ts.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpClient } from '../../src/tools/mcp/client.ts';
import { httpTransport } from '../../src/tools/mcp/http-channel.ts';
import { guardedRequest } from '../../src/net/guarded-fetch.ts';
import { captureLogger, rejection } from '../fixtures/mcp/helpers.ts';
import { fakeMcpHttp } from './helpers/fake-mcp-http.ts';

const test = suite('mcp sse');

async function fakeServer(handler: (req: IncomingMessage, body: any, res: ServerResponse) => void) {
  const requests: { method: string; headers: IncomingMessage['headers']; body: any }[] = [];
  const fake = await fakeMcpHttp((req, body, res) => {
    requests.push({ method: req.method!, headers: req.headers, body });
    if (body && !('id' in body)) return void res.writeHead(202).end();
    if (!body && req.method === 'POST') return void res.writeHead(400).end();
    handler(req, body, res);
  });
  const url = fake.url;
  const logger = captureLogger();
  const request = (u: string, init: any) => guardedRequest(u, init, { mode: 'allow-all' }, { checkAddress: () => null });
  const client = new McpClient({ transport: httpTransport({ url, label: url, request, logger, maxFrameBytes: 4096 }), label: url, clientVersion: '1', logger });
  return {
    client,
    requests,
    logger,
    close: async () => {
      await client.close();
      await fake.close();
    },
  };
}

test('a stream that ends before the response is resumed with GET + Last-Event-ID; server requests on it are answered', async () => {
  let callId: number | undefined;
  const f = await fakeServer((req, body, res) => {
    if (req.method === 'POST' && body.method === 'tools/call') {
      callId = body.id;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Priming event, a ping request from the server, then the connection closes early.
      res.write('id: e1\ndata:\n\nretry: 10\n\n');
      res.end('id: e2\ndata: {"jsonrpc":"2.0","id":"srv-1","method":"ping"}\n\n');
      return;
    }
    if (req.method === 'GET') {
      assert.is(req.headers['last-event-id'], 'e2');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`id: e3\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: callId, result: { content: [{ type: 'text', text: 'resumed' }] } })}\n\n`);
      return;
    }
    if (req.method === 'POST' && body.id === 'srv-1') return void res.writeHead(202).end();
    res.writeHead(500).end();
  });
  try {
    assert.equal((await f.client.callTool('t', {})).content, [{ type: 'text', text: 'resumed' }]);
    const pong = f.requests.find((r) => r.body?.id === 'srv-1');
    assert.equal(pong?.body, { jsonrpc: '2.0', id: 'srv-1', result: {} });
    assert.is(f.requests.find((r) => r.method === 'GET')?.headers['mcp-session-id'], 's-1');
  } finally {
    await f.close();
  }
});

test('a stream that ends without the response and without event ids fails the request (crashed)', async () => {
  const f = await fakeServer((_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end('data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n');
  });
  try {
    const e = await rejection(f.client.callTool('t', {}));
    assert.is(e.code, 'crashed', e.message);
    assert.match(e.message, /closed the connection before answering tools\/call/);
  } finally {
    await f.close();
  }
});

test('a server that floods its answer with log notifications, unknown ids and non-JSON events fills at most a bounded part of the log', async () => {
  const f = await fakeServer((_req, body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const log = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', data: 'x'.repeat(3000) } })}\n\n`;
    const stray = `data: ${JSON.stringify({ jsonrpc: '2.0', id: 999_999, result: {} })}\n\ndata: not json\n\n`;
    res.write((log + stray).repeat(3000));
    res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`);
  });
  try {
    assert.equal((await f.client.callTool('t', {})).content, [{ type: 'text', text: 'done' }]);
    const lines = f.logger.lines.filter((l) => l.level !== 'debug');
    const bytes = lines.reduce((n, l) => n + JSON.stringify(l).length, 0);
    // 9,000 lines and ~9.4 MB before.
    assert.ok(lines.length <= 70, `${lines.length} log lines`);
    assert.ok(bytes < 200_000, `${bytes} bytes logged`);
    assert.ok(lines.some((l) => /dropped/.test(l.msg)), 'the drop is said');
  } finally {
    await f.close();
  }
});

test('a notification answered with an event stream that never ends holds no connection (MCP: 202, no body)', async () => {
  // The fakeServer above answers notifications 202 itself; this one keeps each of them open as a stream.
  const open = new Set<ServerResponse>();
  // tools/call is never answered; notifications (initialized, cancelled) get a stream that stays open.
  const fake = await fakeMcpHttp((_req, body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': hold\n\n');
    if (body && !('id' in body)) {
      open.add(res);
      res.on('close', () => open.delete(res));
    }
  });
  const url = fake.url;
  const logger = captureLogger();
  const request = (u: string, init: any) => guardedRequest(u, init, { mode: 'allow-all' }, { checkAddress: () => null });
  const client = new McpClient({ transport: httpTransport({ url, label: url, request, logger, maxFrameBytes: 4096 }), label: url, clientVersion: '1', logger });
  try {
    for (let i = 0; i < 5; i++) assert.is((await rejection(client.callTool('t', {}, { timeoutMs: 50 }))).code, 'timeout');
    await new Promise((r) => setTimeout(r, 300));
    assert.is(open.size, 0, `${open.size} notification streams still held by the client`);
  } finally {
    await client.close();
    await fake.close();
  }
});

test('an SSE event over maxFrameBytes is a protocol error; a JSON body over it too', async () => {
  let sse = true;
  const f = await fakeServer((req, body, res) => {
    if (sse) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${'x'.repeat(5000)}\n\n`);
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.method !== 'POST') return void res.writeHead(405).end();
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { content: [{ type: 'text', text: 'y'.repeat(5000) }] } }));
    }
  });
  try {
    assert.is((await rejection(f.client.callTool('t', {}))).code, 'protocol');
    sse = false;
    const e = await rejection(f.client.callTool('t', {}));
    assert.is(e.code, 'protocol');
    assert.match(e.message, /over the 4096-byte limit/);
  } finally {
    await f.close();
  }
});

test('202 to a request, or an unexpected content type, is a protocol error naming the request', async () => {
  let mode = 0;
  const f = await fakeServer((_req, _body, res) => {
    if (mode === 0) res.writeHead(202).end();
    else res.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
  });
  try {
    assert.match((await rejection(f.client.callTool('t', {}))).message, /202 Accepted/);
    mode = 1;
    assert.match((await rejection(f.client.callTool('t', {}))).message, /content type "text\/html"/);
  } finally {
    await f.close();
  }
});

test.run();
