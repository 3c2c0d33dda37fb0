// A fake MCP Streamable HTTP server for the test/unit/mcp-*.test.ts files: collects each request's
// JSON body, answers DELETE (session end) 200 and `initialize` with session s-1, and hands every
// other request to the test's handler, which plays the server under test.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeMcpHandler = (req: IncomingMessage, body: any, res: ServerResponse) => void;

export interface FakeMcpHttp {
  server: Server;
  /** http://127.0.0.1:<port>/mcp */
  url: string;
  /** Ends open connections and stops listening (the client is the test's to close first). */
  close(): Promise<void>;
}

/** Listens on 127.0.0.1; `serverInfo` is what initialize names (default {name: 'fake'}). */
export async function fakeMcpHttp(handler: FakeMcpHandler, o: { serverInfo?: Record<string, unknown> } = {}): Promise<FakeMcpHttp> {
  const initResult = { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: o.serverInfo ?? { name: 'fake' } };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
      if (req.method === 'DELETE') return void res.writeHead(200).end();
      if (body?.method === 'initialize') {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1' });
        return void res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: initResult }));
      }
      handler(req, body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
