// `anthropic-native` (spec §5.2): the Messages API, POST {endpoint}/v1/messages (or
// {endpoint}/messages when the endpoint already ends in /v1), anthropic-version 2023-06-01.
// System messages go to `system`; tool results become `tool_result` blocks of a user turn;
// consecutive turns of one role are merged (the API wants user/assistant alternation).
import type { ChatMessage, ToolDefinition } from '../kernel/ports.ts';
import { type CallSlot, type Completion, type StreamDecoder, callIndex, firstCall, isObj, num } from './completion.ts';
import { ProviderFailure, malformed } from './failure.ts';
import { apiType } from './http.ts';
import { parseJson, rawValueAt } from './json-span.ts';
import { MAX_OUTPUT_TOKENS } from './limits.ts';

export const ANTHROPIC_VERSION = '2023-06-01';

export function messagesUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  if (base.endsWith('/messages')) return base;
  return base.endsWith('/v1') ? `${base}/messages` : `${base}/v1/messages`;
}

type Block = Record<string, unknown>;

function blocksOf(m: ChatMessage): { role: 'user' | 'assistant'; content: Block[] } {
  const text: Block[] = m.content === '' ? [] : [{ type: 'text', text: m.content }];
  if (m.role === 'tool') {
    return m.toolCallId ? { role: 'user', content: [{ type: 'tool_result', tool_use_id: m.toolCallId, content: m.content }] } : { role: 'user', content: text };
  }
  if (m.role === 'assistant' && m.toolCall?.id) {
    try {
      const input = JSON.parse(m.toolCall.arguments);
      return { role: 'assistant', content: [...text, { type: 'tool_use', id: m.toolCall.id, name: m.toolCall.name, input }] };
    } catch {
      // Arguments that were not JSON cannot be a tool_use block; the turn goes back as its text.
    }
  }
  return { role: m.role === 'assistant' ? 'assistant' : 'user', content: text };
}

export function anthropicBody(o: { model: string; messages: ChatMessage[]; tools?: ToolDefinition[]; maxTokens?: number; stream: boolean; schema?: unknown }) {
  const system = o.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n');
  const turns: { role: string; content: Block[] }[] = [];
  for (const m of o.messages) {
    if (m.role === 'system') continue;
    const b = blocksOf(m);
    if (b.content.length === 0) continue; // the API rejects empty turns
    const last = turns[turns.length - 1];
    if (last && last.role === b.role) last.content.push(...b.content);
    else turns.push(b);
  }
  // max_tokens is required by this API.
  const body: Record<string, unknown> = { model: o.model, max_tokens: o.maxTokens ?? MAX_OUTPUT_TOKENS, messages: turns, stream: o.stream };
  if (system) body.system = system;
  if (o.tools?.length) {
    body.tools = o.tools.map((t) => (t.description === undefined ? { name: t.name, input_schema: t.input_schema } : { name: t.name, description: t.description, input_schema: t.input_schema }));
    body.tool_choice = { type: 'auto', disable_parallel_tool_use: true };
  }
  return body;
}

/** input + cache reads/writes count as input: they are all tokens the budget pays for. */
function usageOf(u: unknown, prev?: Completion['usage']): Completion['usage'] {
  if (!isObj(u)) return prev;
  const inParts = [u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens].map(num);
  const input = inParts.some((x) => x !== undefined) ? inParts.reduce<number>((a, b) => a + (b ?? 0), 0) : undefined;
  const output = num(u.output_tokens);
  if (input === undefined && output === undefined) return prev;
  return { input_tokens: input ?? prev?.input_tokens ?? 0, output_tokens: output ?? prev?.output_tokens ?? 0 };
}

const errType = (j: any) => apiType(j?.error?.type);

export function parseAnthropic(body: string): Completion {
  let j: any;
  try {
    j = parseJson(body);
  } catch (e) {
    throw malformed('body is not JSON', e);
  }
  if (!isObj(j) || !Array.isArray(j.content)) throw malformed('no content array');
  let text = '';
  const slots: CallSlot[] = [];
  j.content.forEach((b: any, i: number) => {
    if (b?.type === 'text' && typeof b.text === 'string') text += b.text;
    else if (b?.type === 'tool_use') {
      if (typeof b.name !== 'string' || !isObj(b.input)) throw malformed(`content[${i}] tool_use without name or input`);
      // Only the first call's input is used (completion.ts firstCall): cutting each out of the body would
      // cost the body's length per call.
      slots.push({ id: typeof b.id === 'string' ? b.id : '', name: b.name, args: slots.length === 0 ? rawValueAt(body, ['content', i, 'input'])! : '' });
    }
  });
  const usage = usageOf(j.usage);
  return { text, ...firstCall(slots), ...(usage ? { usage } : {}) };
}

/** Messages-API events: message_start, content_block_start/delta/stop, message_delta, message_stop, ping, error. */
export function anthropicStream(onText: (t: string) => void): StreamDecoder {
  let text = '';
  const slots: (CallSlot | undefined)[] = [];
  const startInput: (string | undefined)[] = [];
  let usage: Completion['usage'];
  let done = false;
  return {
    event({ event, data }) {
      if (done) return;
      let j: any;
      try {
        j = parseJson(data);
      } catch (e) {
        throw malformed(`${event} event data is not JSON`, e);
      }
      switch (isObj(j) && typeof j.type === 'string' ? j.type : event) {
        case 'message_start':
          usage = usageOf(j.message?.usage, usage);
          return;
        case 'content_block_start': {
          const b = j.content_block;
          if (typeof j.index !== 'number' || !isObj(b)) throw malformed('content_block_start without index or block');
          if (b.type === 'tool_use') {
            callIndex(j.index);
            if (typeof b.name !== 'string') throw malformed('tool_use block without a name');
            slots[j.index] = { id: typeof b.id === 'string' ? b.id : '', name: b.name, args: '' };
            startInput[j.index] = rawValueAt(data, ['content_block', 'input']);
          } else if (b.type === 'text' && typeof b.text === 'string' && b.text !== '') {
            text += b.text;
            onText(b.text);
          }
          return;
        }
        case 'content_block_delta': {
          const d = j.delta;
          if (!isObj(d)) throw malformed('content_block_delta without delta');
          if (d.type === 'text_delta' && typeof d.text === 'string') {
            text += d.text;
            if (d.text !== '') onText(d.text);
          } else if (d.type === 'input_json_delta' && typeof d.partial_json === 'string') {
            // Checked like the start's: an index such as "__proto__" would reach Array.prototype.
            const s = slots[callIndex(j.index)];
            if (!s) throw malformed('input_json_delta for a block that is not a tool_use');
            s.args += d.partial_json;
          }
          return;
        }
        case 'message_delta':
          usage = usageOf(j.usage, usage);
          return;
        case 'message_stop':
          done = true;
          return;
        case 'error':
          throw new ProviderFailure('api-error', `the API reported an error in the stream${errType(j) ? ` (${errType(j)})` : ''}`, {
            retryable: true,
          });
        default:
          return; // ping, content_block_stop, and event types added later
      }
    },
    get done() {
      return done;
    },
    finish() {
      if (!done) throw new ProviderFailure('truncated', 'the stream ended before message_stop', { retryable: true });
      // A tool_use whose input arrived as no deltas at all keeps the input of its start block.
      slots.forEach((s, i) => {
        if (s && s.args === '') s.args = startInput[i] ?? '{}';
      });
      return { text, ...firstCall(slots), ...(usage ? { usage } : {}) };
    },
  };
}
