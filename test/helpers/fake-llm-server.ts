// A real HTTP server (node:http, port 0) that plays scripted LLM API responses, for the provider
// tests and the agent's end-to-end tests. Each request consumes the next scripted step; requests
// are recorded (headers and parsed body) so tests can assert exactly what was sent. It speaks
// whatever the step says: plain JSON, raw SSE chunks, a hang, a dropped connection. Payload
// builders below produce OpenAI chat-completion and Anthropic Messages shapes.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Step =
  | { status?: number; headers?: Record<string, string>; json: unknown }
  /** Body sent verbatim (malformed JSON, truncated bodies). */
  | { status?: number; headers?: Record<string, string>; body: string | Uint8Array }
  /** An event stream: chunks written in order (cut anywhere), `gapMs` apart, then the response ends — unless `stall`. */
  | { sse: (string | Uint8Array)[]; gapMs?: number; stall?: boolean; headers?: Record<string, string> }
  /** Headers never come. */
  | { hang: true }
  /** The socket is destroyed without a response. */
  | { destroy: true };

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  text: string;
  body: any;
}

/** Answers `POST …/embeddings` (OpenAI shape) outside the script: vectors for the inputs, or a Step (errors). */
export type EmbeddingsHandler = (input: string[], body: any) => number[][] | Step;

export interface FakeLlm {
  url: string;
  requests: Recorded[];
  /**
   * When set, requests to a path ending in /embeddings are answered by it (and recorded) instead of consuming
   * the script: one deterministic vector per input, `usage.prompt_tokens`/`total_tokens` = the inputs' word count.
   */
  embeddings?: EmbeddingsHandler;
  queue(...steps: Step[]): void;
  /** Steps not yet consumed. */
  readonly pending: number;
  close(): Promise<void>;
}

export async function startFakeLlm(): Promise<FakeLlm> {
  const steps: Step[] = [];
  const requests: Recorded[] = [];
  const sockets = new Set<Socket>();
  // eslint-disable-next-line prefer-const -- assigned once the port is known; the handler reads it per request
  let fake: FakeLlm;
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, text, body });
      let step: Step | undefined;
      if (fake.embeddings && /\/embeddings(\?|$)/.test(req.url ?? '')) {
        const input: string[] = Array.isArray((body as any)?.input) ? (body as any).input : [String((body as any)?.input)];
        const r = fake.embeddings(input, body);
        const tokens = input.reduce((n, t) => n + t.split(/\s+/).filter(Boolean).length, 0);
        step = Array.isArray(r)
          ? { json: { object: 'list', model: (body as any)?.model, data: r.map((embedding, index) => ({ object: 'embedding', index, embedding })), usage: { prompt_tokens: tokens, total_tokens: tokens } } }
          : r;
      }
      step ??= steps.shift() ?? { status: 500, json: { error: { type: 'no_script', message: 'no scripted response left' } } };
      if ('hang' in step) return;
      if ('destroy' in step) return void req.socket.destroy();
      if ('sse' in step) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...step.headers });
        let i = 0;
        const next = () => {
          if (res.destroyed) return;
          if (i === step.sse.length) return void (step.stall ? undefined : res.end());
          res.write(step.sse[i++]);
          setTimeout(next, step.gapMs ?? 0);
        };
        return next();
      }
      const payload = 'json' in step ? JSON.stringify(step.json) : step.body;
      res.writeHead(step.status ?? 200, { 'content-type': 'application/json', ...step.headers });
      res.end(payload);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  fake = fakeOf(`http://127.0.0.1:${port}`, requests, steps, server, sockets);
  return fake;
}

function fakeOf(url: string, requests: Recorded[], steps: Step[], server: Server, sockets: Set<Socket>): FakeLlm {
  return {
    url,
    requests,
    queue: (...s) => void steps.push(...s),
    get pending() {
      return steps.length;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A URL where nothing listens (connection refused). */
export async function deadUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

// ---- payload builders ----

export interface Call {
  id: string;
  name: string;
  /** Raw JSON text of the arguments. */
  args: string;
}

export function openaiJson(o: { content?: string | null; calls?: Call[]; usage?: [number, number] }) {
  const message: Record<string, unknown> = { role: 'assistant', content: o.content ?? null };
  if (o.calls) message.tool_calls = o.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } }));
  const r: Record<string, unknown> = { id: 'chatcmpl-1', object: 'chat.completion', model: 'm', choices: [{ index: 0, message, finish_reason: o.calls ? 'tool_calls' : 'stop' }] };
  if (o.usage) r.usage = { prompt_tokens: o.usage[0], completion_tokens: o.usage[1], total_tokens: o.usage[0] + o.usage[1] };
  return r;
}

export const sseData = (v: unknown) => `data: ${typeof v === 'string' ? v : JSON.stringify(v)}\n\n`;

/** Chat-completion chunks: text deltas, tool-call argument fragments, a usage chunk, [DONE] unless `done: false`. */
export function openaiSse(o: { text?: string[]; call?: { id: string; name: string; fragments: string[] }; usage?: [number, number]; done?: boolean }): string[] {
  const chunk = (delta: unknown, finish: string | null = null) => sseData({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
  const out = [chunk({ role: 'assistant', content: '' })];
  for (const t of o.text ?? []) out.push(chunk({ content: t }));
  if (o.call) {
    out.push(chunk({ tool_calls: [{ index: 0, id: o.call.id, type: 'function', function: { name: o.call.name, arguments: '' } }] }));
    for (const f of o.call.fragments) out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: f } }] }));
  }
  out.push(chunk({}, o.call ? 'tool_calls' : 'stop'));
  if (o.usage) out.push(sseData({ id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: o.usage[0], completion_tokens: o.usage[1] } }));
  if (o.done !== false) out.push(sseData('[DONE]'));
  return out;
}

/** A Messages-API body; a tool_use `input` is spliced in as raw text so tests can check fidelity. */
export function anthropicBodyText(o: { text?: string; tool?: { id: string; name: string; inputRaw: string }; usage?: [number, number] }): string {
  const blocks: string[] = [];
  if (o.text !== undefined) blocks.push(JSON.stringify({ type: 'text', text: o.text }));
  if (o.tool) blocks.push(`{"type":"tool_use","id":${JSON.stringify(o.tool.id)},"name":${JSON.stringify(o.tool.name)},"input":${o.tool.inputRaw}}`);
  const usage = o.usage ? `,"usage":{"input_tokens":${o.usage[0]},"output_tokens":${o.usage[1]}}` : '';
  return `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[${blocks.join(',')}],"stop_reason":"${o.tool ? 'tool_use' : 'end_turn'}"${usage}}`;
}

export const sseEvent = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** Messages-API stream events; `stop: false` leaves out message_stop (a truncated stream). */
export function anthropicSse(o: { text?: string[]; tool?: { id: string; name: string; fragments: string[] }; usage?: [number, number]; stop?: boolean }): string[] {
  const out = [sseEvent('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: o.usage?.[0] ?? 0, output_tokens: 1 } } })];
  out.push(sseEvent('ping', { type: 'ping' }));
  let index = 0;
  if (o.text) {
    out.push(sseEvent('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
    for (const t of o.text) out.push(sseEvent('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } }));
    out.push(sseEvent('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  if (o.tool) {
    out.push(sseEvent('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: o.tool.id, name: o.tool.name, input: {} } }));
    for (const f of o.tool.fragments) out.push(sseEvent('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: f } }));
    out.push(sseEvent('content_block_stop', { type: 'content_block_stop', index }));
  }
  out.push(sseEvent('message_delta', { type: 'message_delta', delta: { stop_reason: o.tool ? 'tool_use' : 'end_turn' }, usage: { output_tokens: o.usage?.[1] ?? 0 } }));
  if (o.stop !== false) out.push(sseEvent('message_stop', { type: 'message_stop' }));
  return out;
}
