// A deterministic simulated small model behind a faithful fake of the two APIs people run on a board:
//   OpenAI-compatible  GET /v1/models, POST /v1/chat/completions (tools/tool_calls, response_format)
//   Ollama native      GET /api/tags, POST /api/chat (tools, `format` = a JSON schema or "json", NDJSON
//                      streaming by default as Ollama does), and Ollama's error bodies:
//                      404 {"error":"model \"x\" not found, try pulling it first"} on /api, the OpenAI
//                      shape {"error":{"message":…,"type":"api_error"}} on /v1.
// The "model" picks an intent from the user's message (a tool call with arguments, or a reply) and then
// writes it the way small models do in practice, per output mode (how a request is read: tools → native,
// response_format / format → json_schema, neither → prompt). Quirks (what small models were seen doing):
//
//   quirk        native                                   json_schema (constrained)   prompt
//   plain_text   content is prose (no call)               valid JSON                  prose
//   fence        ```json fenced tool_call in content      valid JSON                  fenced JSON
//   tool_case    native call, tool name case changed      valid (the enum holds)      name case changed
//   args_string  arguments are a JSON string of a string  valid                       "args":"{…}"
//   two_calls    two native calls                         valid, one call             two objects
//   think        <think>…</think> then the answer         valid JSON                  <think>…</think>{…}
//   truncated    arguments cut at the token limit         JSON cut                    JSON cut
//
// A quirk applies to the first `quirkAttempts` (default 1) answers of a turn: after a correction that
// shows it its mistake, the model gets it right — the common case the correction loop is for. Servers
// can lack tool calling (400 "<model> does not support tools", as Ollama says) or structured output.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Quirk = 'none' | 'plain_text' | 'fence' | 'tool_case' | 'args_string' | 'two_calls' | 'think' | 'truncated';
export type SimMode = 'native' | 'json_schema' | 'prompt';

export interface Intent {
  /** Matches the user's message (substring, case-insensitive). */
  when: string;
  tool?: string;
  args?: Record<string, unknown>;
  /** The answer (without a tool), or the answer after the tool's result. */
  reply: string;
  /** The answer after a failed tool result (`"ok":false`); default `reply`. */
  replyOnError?: string;
  quirk?: Quirk;
  quirkAttempts?: number;
}

export interface SimOptions {
  /** Model names the server has (listed by /v1/models and /api/tags); others are 404. */
  models: string[];
  intents: Intent[];
  /** When nothing matches. */
  fallbackReply?: string;
  /** The server's tool calling (false: 400 "does not support tools"). Default true. */
  tools?: boolean;
  /** Structured output (false: 400 for response_format / format). Default true. */
  jsonSchema?: boolean;
  /** Bearer key the server wants (401 otherwise). */
  apiKey?: string;
}

export interface SimRequest {
  path: string;
  mode?: SimMode;
  body: any;
}

export interface SimLlm {
  url: string;
  options: SimOptions;
  requests: SimRequest[];
  close(): Promise<void>;
}

const CORRECTION = 'Your previous output was rejected';

export async function startSimLlm(options: SimOptions): Promise<SimLlm> {
  const requests: SimRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      let body: any;
      try {
        body = parts.length ? JSON.parse(Buffer.concat(parts).toString('utf8')) : undefined;
      } catch {
        body = undefined;
      }
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      const ollama = path.startsWith('/api/');
      const rec: SimRequest = { path, body };
      requests.push(rec);
      if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        return ollama ? send(401, { error: 'unauthorized' }) : send(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
      }
      if (req.method === 'GET' && path === '/v1/models') return send(200, { object: 'list', data: options.models.map((id) => ({ id, object: 'model', created: 1730000000, owned_by: 'library' })) });
      if (req.method === 'GET' && path === '/api/tags') {
        return send(200, { models: options.models.map((name) => ({ name, model: name, modified_at: '2026-11-01T00:00:00Z', size: 986_000_000, digest: 'sha256:0', details: { format: 'gguf', family: 'qwen2', parameter_size: '1.5B', quantization_level: 'Q4_K_M' } })) });
      }
      if (req.method === 'GET' && (path === '/' || path === '/api/version')) return path === '/' ? void res.end('Ollama is running') : send(200, { version: '0.5.7' });
      const chat = req.method === 'POST' && (path === '/v1/chat/completions' || path === '/api/chat');
      if (!chat) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        return void res.end('404 page not found');
      }
      if (!body || typeof body.model !== 'string' || !Array.isArray(body.messages)) return ollama ? send(400, { error: 'invalid request' }) : send(400, { error: { message: 'invalid request', type: 'invalid_request_error' } });
      if (!options.models.includes(body.model)) {
        const m = `model "${body.model}" not found, try pulling it first`;
        return ollama ? send(404, { error: m }) : send(404, { error: { message: m, type: 'api_error', param: null, code: null } });
      }
      const tools = Array.isArray(body.tools) && body.tools.length > 0;
      const schema = ollama ? body.format !== undefined && body.format !== '' : body.response_format?.type === 'json_schema' || body.response_format?.type === 'json_object';
      if (tools && options.tools === false) {
        const m = `registry.ollama.ai/library/${body.model} does not support tools`;
        return ollama ? send(400, { error: m }) : send(400, { error: { message: m, type: 'api_error', param: null, code: null } });
      }
      if (schema && options.jsonSchema === false) return ollama ? send(400, { error: 'format is not supported' }) : send(400, { error: { message: 'response_format is not supported', type: 'invalid_request_error' } });
      const mode: SimMode = tools ? 'native' : schema ? 'json_schema' : 'prompt';
      rec.mode = mode;
      // A constrained server follows whatever schema it is given: one that is not the FemtoClaw output
      // (a doctor probe) gets a minimal instance of it.
      const given = ollama ? body.format : body.response_format?.json_schema?.schema;
      const foreign = mode === 'json_schema' && typeof given === 'object' && given !== null && !JSON.stringify(given).includes('"message"');
      const out = foreign ? { content: JSON.stringify(instanceOf(given)) } : answer(options, body.messages, mode);
      const promptTokens = Math.ceil(JSON.stringify(body.messages).length / 4) + (tools ? Math.ceil(JSON.stringify(body.tools).length / 4) : 0);
      const completionTokens = Math.max(1, Math.ceil(((out.content ?? '').length + JSON.stringify(out.calls ?? []).length) / 4));
      if (ollama) {
        // Ollama sends tool arguments as an object; a cut or string argument stays a string as written.
        const message: Record<string, unknown> = { role: 'assistant', content: out.content ?? '' };
        if (out.calls) message.tool_calls = out.calls.map((c) => ({ function: { name: c.name, arguments: tryParse(c.arguments) } }));
        const done = { model: body.model, created_at: '2026-11-27T00:00:00Z', message, done: true, done_reason: 'stop', prompt_eval_count: promptTokens, eval_count: completionTokens };
        if (body.stream === false) return send(200, done);
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        res.write(JSON.stringify({ model: body.model, created_at: done.created_at, message, done: false }) + '\n');
        return void res.end(JSON.stringify({ ...done, message: { role: 'assistant', content: '' } }) + '\n');
      }
      const message: Record<string, unknown> = { role: 'assistant', content: out.content ?? null };
      if (out.calls) message.tool_calls = out.calls.map((c, i) => ({ id: `call_${requests.length}_${i}`, type: 'function', function: { name: c.name, arguments: c.arguments } }));
      const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
      if (body.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-sim', object: 'chat.completion.chunk', model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        if (out.content) for (const piece of out.content.match(/.{1,8}/gs) ?? []) res.write(chunk({ content: piece }, null));
        if (out.calls) res.write(chunk({ tool_calls: (message.tool_calls as any[]).map((c, index) => ({ index, ...c })) }, null));
        res.write(chunk({}, out.calls ? 'tool_calls' : 'stop'));
        res.write(`data: ${JSON.stringify({ id: 'chatcmpl-sim', object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
        return void res.end('data: [DONE]\n\n');
      }
      return send(200, { id: 'chatcmpl-sim', object: 'chat.completion', created: 1730000000, model: body.model, choices: [{ index: 0, message, finish_reason: out.calls ? 'tool_calls' : 'stop' }], usage });
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    options,
    requests,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

interface Output {
  content?: string;
  calls?: { name: string; arguments: string }[];
}

function instanceOf(schema: any): unknown {
  if (Array.isArray(schema?.enum)) return schema.enum[0];
  switch (schema?.type) {
    case 'object':
      return Object.fromEntries(((schema.required as string[] | undefined) ?? []).map((k) => [k, instanceOf(schema.properties?.[k])]));
    case 'boolean':
      return true;
    case 'number':
    case 'integer':
      return 0;
    case 'array':
      return [];
    default:
      return 'ok';
  }
}

function tryParse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

const text = (m: any): string => (typeof m?.content === 'string' ? m.content : '');

/** The turn as the model reads it: the user's request, whether a tool result came back, how many corrections so far. */
function situation(messages: any[]): { user: string; toolResult?: string; attempt: number } {
  let attempt = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    const t = text(m);
    if (m.role === 'user' && t.startsWith(CORRECTION)) {
      attempt++;
      continue;
    }
    if (m.role === 'tool' || (m.role === 'user' && t.startsWith('{"tool_result"'))) return { user: lastUser(messages, i), toolResult: t, attempt };
    if (m.role === 'user') return { user: t, attempt };
  }
  return { user: '', attempt };
}

function lastUser(messages: any[], before: number): string {
  for (let i = before - 1; i >= 0; i--) {
    const t = text(messages[i]);
    if (messages[i].role === 'user' && !t.startsWith(CORRECTION) && !t.startsWith('{"tool_result"')) return t;
  }
  return '';
}

function answer(o: SimOptions, messages: any[], mode: SimMode): Output {
  const s = situation(messages);
  const intent = o.intents.find((i) => s.user.toLowerCase().includes(i.when.toLowerCase()));
  const quirk: Quirk = intent && s.attempt < (intent.quirkAttempts ?? 1) ? (intent.quirk ?? 'none') : 'none';
  if (!intent) return say(o.fallbackReply ?? 'I do not know.', 'none', mode);
  if (s.toolResult !== undefined || !intent.tool) {
    const failed = s.toolResult !== undefined && s.toolResult.includes('"ok":false');
    return say(failed ? (intent.replyOnError ?? intent.reply) : intent.reply, s.toolResult !== undefined ? 'none' : quirk, mode);
  }
  return act(intent.tool, intent.args ?? {}, quirk, mode);
}

const THINK = '<think>\nThe user wants something. I should answer.\n</think>\n';

function say(reply: string, quirk: Quirk, mode: SimMode): Output {
  const json = JSON.stringify({ message: { content: reply } });
  if (mode === 'json_schema') return { content: quirk === 'truncated' ? json.slice(0, Math.ceil(json.length / 2)) : json };
  if (mode === 'native') {
    if (quirk === 'think') return { content: THINK + reply };
    if (quirk === 'fence') return { content: '```json\n' + json + '\n```' };
    return { content: reply };
  }
  switch (quirk) {
    case 'plain_text':
      return { content: reply };
    case 'fence':
      return { content: '```json\n' + json + '\n```' };
    case 'think':
      return { content: THINK + json };
    case 'truncated':
      return { content: json.slice(0, Math.ceil(json.length / 2)) };
    default:
      return { content: json };
  }
}

function act(tool: string, args: Record<string, unknown>, quirk: Quirk, mode: SimMode): Output {
  const argsText = JSON.stringify(args);
  const form = (name: string, a: unknown) => JSON.stringify({ tool_call: { tool: name, args: a } });
  if (mode === 'json_schema') {
    const json = form(tool, args);
    return { content: quirk === 'truncated' ? json.slice(0, json.length - 12) : json };
  }
  const cased = tool.charAt(0).toUpperCase() + tool.slice(1);
  if (mode === 'native') {
    switch (quirk) {
      case 'plain_text':
        return { content: `Sure, I will use ${tool} now.` };
      case 'fence':
        return { content: '```json\n' + form(tool, args) + '\n```' };
      case 'tool_case':
        return { calls: [{ name: cased, arguments: argsText }] };
      case 'args_string':
        return { calls: [{ name: tool, arguments: JSON.stringify(argsText) }] };
      case 'two_calls':
        return { calls: [{ name: tool, arguments: argsText }, { name: tool, arguments: argsText }] };
      case 'think':
        return { content: THINK, calls: [{ name: tool, arguments: argsText }] };
      case 'truncated':
        return { calls: [{ name: tool, arguments: argsText.slice(0, argsText.length - 6) }] };
      default:
        return { calls: [{ name: tool, arguments: argsText }] };
    }
  }
  switch (quirk) {
    case 'plain_text':
      return { content: `Sure, I will use ${tool} now.` };
    case 'fence':
      return { content: '```json\n' + form(tool, args) + '\n```' };
    case 'tool_case':
      return { content: form(cased, args) };
    case 'args_string':
      return { content: form(tool, argsText) };
    case 'two_calls':
      return { content: form(tool, args) + '\n' + form(tool, args) };
    case 'think':
      return { content: THINK + form(tool, args) };
    case 'truncated': {
      const json = form(tool, args);
      return { content: json.slice(0, json.length - 12) };
    }
    default:
      return { content: form(tool, args) };
  }
}
