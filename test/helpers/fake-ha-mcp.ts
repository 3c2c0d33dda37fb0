// A stand-in for Home Assistant's `mcp_server` integration on loopback, built on the official MCP SDK's server
// classes. What it reproduces of the real one (homeassistant/components/mcp_server/http.py, and the Assist
// API's intent tools):
//   - one Streamable HTTP endpoint, POST /api/mcp, served *stateless* (no Mcp-Session-Id: every request runs
//     on a fresh server) and answered as plain JSON, not SSE; GET is 405, other paths 404;
//   - authentication by `Authorization: Bearer <long-lived access token>`; anything else is HTTP 401
//     "401: Unauthorized" before MCP is looked at, as Home Assistant's auth middleware does;
//   - the tools of the Assist API over the entities exposed to it: HassTurnOn / HassTurnOff with the intent
//     slots as their input (name, area, floor, domain[], device_class[]) and GetLiveContext (no input) giving
//     an overview of every exposed entity's state. Turning a lock "on" locks it, a cover "on" opens it.
// It records every HTTP request (with the Authorization header it got) and every tool call, and keeps the
// devices' state so a test can see what the agent really did to the house.
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export interface HaEntity {
  entity_id: string;
  name: string;
  area: string;
  state: string;
  device_class?: string;
}

export interface HaToolCall {
  tool: string;
  args: Record<string, unknown>;
  at: number;
}

export interface HaHttpRequest {
  method: string;
  path: string;
  authorization?: string;
  /** The JSON-RPC method of a POST body, when it had one. */
  rpc?: string;
  status?: number;
}

export interface FakeHaMcp {
  /** http://127.0.0.1:<port>/api/mcp */
  url: string;
  requests: HaHttpRequest[];
  calls: HaToolCall[];
  /** The current state of an entity (e.g. `lock.front_door` → `locked`). */
  state(entityId: string): string | undefined;
  close(): Promise<void>;
}

export const DEFAULT_ENTITIES: HaEntity[] = [
  { entity_id: 'light.kitchen', name: 'Kitchen light', area: 'Kitchen', state: 'off' },
  { entity_id: 'lock.front_door', name: 'Front door', area: 'Hall', state: 'locked' },
  { entity_id: 'cover.garage_door', name: 'Garage door', area: 'Garage', state: 'closed', device_class: 'garage' },
  { entity_id: 'sensor.hall_temperature', name: 'Hall temperature', area: 'Hall', state: '19.5', device_class: 'temperature' },
];

// The intent slots Home Assistant turns into the tool's JSON schema (all optional; at least one of name,
// area or floor is checked when the intent runs).
const TARGET_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    area: { type: 'string' },
    floor: { type: 'string' },
    domain: { type: 'array', items: { type: 'string' } },
    device_class: { type: 'array', items: { type: 'string' } },
  },
};

const TOOLS = [
  { name: 'HassTurnOn', description: 'Turns on, opens or presses a device or entity. On a lock it locks.', inputSchema: TARGET_SCHEMA },
  { name: 'HassTurnOff', description: 'Turns off or closes a device or entity. On a lock it unlocks.', inputSchema: TARGET_SCHEMA },
  {
    name: 'GetLiveContext',
    description: 'Gives the current state, value or mode of the devices, sensors and areas exposed to the assistant.',
    inputSchema: { type: 'object', properties: {} },
  },
];

const ON_STATE: Record<string, string> = { lock: 'locked', cover: 'open' };
const OFF_STATE: Record<string, string> = { lock: 'unlocked', cover: 'closed' };
const domainOf = (e: HaEntity) => e.entity_id.split('.')[0]!;
const same = (a: unknown, b: string) => typeof a === 'string' && a.trim().toLowerCase() === b.toLowerCase();
const text = (value: unknown, isError = false): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value) }], ...(isError ? { isError } : {}) });

function act(entities: HaEntity[], tool: 'HassTurnOn' | 'HassTurnOff', args: Record<string, any>): CallToolResult {
  if (args.name === undefined && args.area === undefined && args.floor === undefined) {
    return text({ error: 'MatchFailedError', message: 'Name, area or floor is required' }, true);
  }
  const hits = entities.filter(
    (e) =>
      (args.name === undefined || same(args.name, e.name) || same(args.name, e.entity_id)) &&
      (args.area === undefined || same(args.area, e.area)) &&
      (!Array.isArray(args.domain) || args.domain.includes(domainOf(e))) &&
      (!Array.isArray(args.device_class) || (e.device_class !== undefined && args.device_class.includes(e.device_class))) &&
      domainOf(e) !== 'sensor',
  );
  if (hits.length === 0) return text({ error: 'MatchFailedError', message: `No device or entity matched ${JSON.stringify(args)}` }, true);
  for (const e of hits) e.state = (tool === 'HassTurnOn' ? ON_STATE : OFF_STATE)[domainOf(e)] ?? (tool === 'HassTurnOn' ? 'on' : 'off');
  return text({
    speech: {},
    response_type: 'action_done',
    data: { targets: [], success: hits.map((e) => ({ name: e.name, type: 'entity', id: e.entity_id })), failed: [] },
  });
}

function liveContext(entities: HaEntity[]): CallToolResult {
  const lines = entities.map((e) => `- names: ${e.name}\n  domain: ${domainOf(e)}\n  state: '${e.state}'\n  areas: ${e.area}`);
  return text({ success: true, result: `Live Context: An overview of the areas and the devices in this smart home:\n${lines.join('\n')}` });
}

function mcpServer(entities: HaEntity[], calls: HaToolCall[]): Server {
  const s = new Server({ name: 'home-assistant', version: '2026.11.0' }, { capabilities: { tools: {} } });
  s.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS as any }));
  s.setRequestHandler(CallToolRequestSchema, async (req) => {
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    calls.push({ tool: req.params.name, args, at: Date.now() });
    switch (req.params.name) {
      case 'HassTurnOn':
      case 'HassTurnOff':
        return act(entities, req.params.name, args);
      case 'GetLiveContext':
        return liveContext(entities);
      default:
        return text({ error: `Tool ${req.params.name} not found` }, true);
    }
  });
  return s;
}

async function body(req: IncomingMessage): Promise<string> {
  let raw = '';
  for await (const c of req) raw += c;
  return raw;
}

export async function startFakeHaMcp(opts: { token: string; entities?: HaEntity[] }): Promise<FakeHaMcp> {
  const entities = (opts.entities ?? DEFAULT_ENTITIES).map((e) => ({ ...e }));
  const requests: HaHttpRequest[] = [];
  const calls: HaToolCall[] = [];
  const sockets = new Set<Socket>();
  const http: HttpServer = createServer(async (req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    const raw = await body(req);
    let parsed: any;
    try {
      parsed = raw ? JSON.parse(raw) : undefined;
    } catch {
      parsed = undefined;
    }
    const rec: HaHttpRequest = { method: req.method ?? '', path, authorization: req.headers.authorization, rpc: typeof parsed?.method === 'string' ? parsed.method : undefined };
    requests.push(rec);
    const answer = (status: number, msg: string) => {
      rec.status = status;
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(msg);
    };
    if (path !== '/api/mcp') return answer(404, '404: Not Found');
    if (req.headers.authorization !== `Bearer ${opts.token}`) return answer(401, '401: Unauthorized');
    if (req.method !== 'POST') return answer(405, '405: Method Not Allowed');
    // Stateless, as Home Assistant serves it: a fresh MCP server per request, JSON answers.
    const server = mcpServer(entities, calls);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, parsed);
    rec.status = res.statusCode;
  });
  http.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/api/mcp`,
    requests,
    calls,
    state: (id) => entities.find((e) => e.entity_id === id)?.state,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => http.close(r));
    },
  };
}
