// `openai-compatible` (spec §5.2): POST {endpoint}/chat/completions, as served by OpenAI, Ollama
// (/v1), llama.cpp server and vLLM. Only fields all four accept are sent: `max_tokens` (not
// `max_completion_tokens`), `parallel_tool_calls: false` with tools (FemtoClaw wants one call),
// `stream_options.include_usage` when streaming so the ledger gets real numbers.
import type { ChatMessage, ToolDefinition } from '../kernel/ports.ts';
import { type CallSlot, type Completion, type StreamDecoder, callIndex, firstCall, isObj, num } from './completion.ts';
import { ProviderFailure, malformed } from './failure.ts';
import { apiType } from './http.ts';
import { parseJson, rawElementsAt, rawValueAt } from './json-span.ts';

export function chatUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return base.endsWith('/chat/completions') ? base : `${base}/chat/completions`;
}

function wireMessage(m: ChatMessage): Record<string, unknown> {
  if (m.role === 'assistant' && m.toolCall?.id) {
    return {
      role: 'assistant',
      content: m.content === '' ? null : m.content,
      tool_calls: [{ id: m.toolCall.id, type: 'function', function: { name: m.toolCall.name, arguments: m.toolCall.arguments } }],
    };
  }
  if (m.role === 'tool') return m.toolCallId ? { role: 'tool', tool_call_id: m.toolCallId, content: m.content } : { role: 'user', content: m.content };
  return { role: m.role, content: m.content };
}

export function openaiBody(o: { model: string; messages: ChatMessage[]; tools?: ToolDefinition[]; maxTokens?: number; stream: boolean; schema?: Record<string, unknown> }) {
  const body: Record<string, unknown> = { model: o.model, messages: o.messages.map(wireMessage), stream: o.stream };
  if (o.stream) body.stream_options = { include_usage: true };
  if (o.maxTokens !== undefined) body.max_tokens = o.maxTokens;
  if (o.tools?.length) {
    body.tools = o.tools.map((t) => ({
      type: 'function',
      function: t.description === undefined ? { name: t.name, parameters: t.input_schema } : { name: t.name, description: t.description, parameters: t.input_schema },
    }));
    body.parallel_tool_calls = false;
  }
  // Structured outputs (json_schema mode): OpenAI, vLLM, llama.cpp server, LM Studio and Ollama (≥ 0.5, on
  // /v1) constrain decoding to it. `strict: false`: OpenAI's strict subset would refuse ordinary tool
  // schemas (optional properties); the FemtoClaw validator is strict either way.
  if (o.schema) body.response_format = { type: 'json_schema', json_schema: { name: 'femtoclaw_output', strict: false, schema: o.schema } };
  return body;
}

/** Some servers and gateways answer 200 with an error object; it is reported by its type only. */
function apiError(e: unknown, where: string): ProviderFailure {
  const type = isObj(e) ? apiType(e.type ?? e.code) : undefined;
  const t = type ? ` (${type})` : '';
  return new ProviderFailure('api-error', `the API reported an error ${where}${t}`, { retryable: true });
}

function usageOf(u: unknown): Completion['usage'] {
  if (!isObj(u)) return undefined;
  const i = num(u.prompt_tokens);
  const o = num(u.completion_tokens);
  return i === undefined && o === undefined ? undefined : { input_tokens: i ?? 0, output_tokens: o ?? 0 };
}

/** `arguments` is a JSON string per the API; a server that sends an object gets its raw text taken from the body. */
function argsText(v: unknown, body: string, path: (string | number)[]): string {
  if (typeof v === 'string') return v;
  const raw = v === undefined ? undefined : rawValueAt(body, path);
  if (raw === undefined) throw malformed('tool call without arguments');
  return raw;
}

export function parseOpenai(body: string): Completion {
  let j: any;
  try {
    j = parseJson(body);
  } catch (e) {
    throw malformed('body is not JSON', e);
  }
  if (isObj(j) && j.error !== undefined && j.choices === undefined) throw apiError(j.error, 'in the response');
  const msg = j?.choices?.[0]?.message;
  if (!isObj(msg)) throw malformed('no choices[0].message');
  if (msg.content != null && typeof msg.content !== 'string') throw malformed('message.content is not a string');
  const slots: CallSlot[] = [];
  if (Array.isArray(msg.tool_calls)) {
    msg.tool_calls.forEach((c: any, i: number) => {
      const f = c?.function;
      if (!isObj(f) || typeof f.name !== 'string') throw malformed(`tool_calls[${i}] has no function name`);
      // Only the first call's arguments are used (completion.ts firstCall): cutting a JSON value out of the
      // body for every call would cost the body's length per call.
      slots.push({ id: typeof c.id === 'string' ? c.id : '', name: f.name, args: i === 0 ? argsText(f.arguments, body, ['choices', 0, 'message', 'tool_calls', i, 'function', 'arguments']) : '' });
    });
  }
  const usage = usageOf(j.usage);
  return { text: msg.content ?? '', ...firstCall(slots), ...(usage ? { usage } : {}) };
}

/** Chat-completion chunks; done at `[DONE]`, or at stream end after a finish_reason (servers that omit [DONE]). */
/**
 * A delta with something in it: any non-empty string but the role (content, reasoning_content and the like,
 * which a reasoning model streams for minutes before its answer), or tool calls. `{}`, `{"content": ""}` and
 * a role alone carry nothing.
 */
function carries(d: unknown): boolean {
  if (!isObj(d)) return false;
  return Object.entries(d).some(([k, v]) => (typeof v === 'string' ? v !== '' && k !== 'role' : Array.isArray(v) ? v.length > 0 : false));
}

export function openaiStream(onText: (t: string) => void): StreamDecoder {
  let text = '';
  const slots: CallSlot[] = [];
  /**
   * Each call's argument fragments. A fragment that is a JSON value rather than a string (some servers send the
   * arguments whole) is cut out of its chunk's text only at the end, for the call that is used (the first), from
   * the chunk's tool_calls elements split in one pass: cutting each from the whole chunk would be quadratic.
   */
  const parts = new Map<CallSlot, (string | (() => string))[]>();
  let usage: Completion['usage'];
  let done = false;
  let finished = false;
  let advanced = 0;
  return {
    event({ data }) {
      if (done) return;
      if (data === '[DONE]') {
        done = true;
        advanced++;
        return;
      }
      let j: any;
      try {
        j = parseJson(data);
      } catch (e) {
        throw malformed('stream chunk is not JSON', e);
      }
      if (!isObj(j)) throw malformed('stream chunk is not an object');
      if (j.error !== undefined) throw apiError(j.error, 'in the stream');
      const u = usageOf(j.usage);
      if (u) {
        usage = u;
        advanced++;
      }
      const choice = j.choices?.[0];
      if (!isObj(choice)) return; // e.g. the usage-only chunk
      if (choice.finish_reason != null) finished = true;
      const d = choice.delta;
      if (choice.finish_reason != null || carries(d)) advanced++;
      if (!isObj(d)) return;
      if (typeof d.content === 'string' && d.content !== '') {
        text += d.content;
        onText(d.content);
      }
      if (Array.isArray(d.tool_calls)) {
        let elements: string[] | undefined;
        const element = (k: number) => (elements ??= rawElementsAt(data, ['choices', 0, 'delta', 'tool_calls']) ?? [])[k] ?? '';
        d.tool_calls.forEach((c: any, k: number) => {
          const idx = callIndex(typeof c?.index === 'number' ? c.index : k);
          const s = (slots[idx] ??= { id: '', name: '', args: '' });
          if (!parts.has(s)) parts.set(s, []);
          if (typeof c.id === 'string') s.id = c.id;
          const f = c.function;
          if (!isObj(f)) return;
          if (typeof f.name === 'string') s.name += f.name;
          const a = f.arguments;
          if (a !== undefined) parts.get(s)!.push(typeof a === 'string' ? a : () => argsText(a, element(k), ['function', 'arguments']));
        });
      }
    },
    get done() {
      return done;
    },
    get advanced() {
      return advanced;
    },
    finish() {
      if (!done && !finished) throw new ProviderFailure('truncated', 'the stream ended before [DONE]', { retryable: true });
      const first = slots.find((s) => s !== undefined);
      if (first) first.args = parts.get(first)!.map((p) => (typeof p === 'string' ? p : p())).join('');
      return { text, ...firstCall(slots), ...(usage ? { usage } : {}) };
    },
  };
}
