// A drop-in for the agent side of the channel port (docs/channels.md "The agent port"): one agent per
// (conversation, tools) built by the caller's factory, so each channel user has a history of their own
// and a viewer's agent has no tools. Turns of one conversation run one after another (two turns
// appending to one history at once would interleave it); different conversations run in parallel, as the
// trigger allows. Idle conversations beyond `maxConversations` are dropped, least recently used first
// (their history lives on in the conversation store, if the factory gives them one).
import type { TurnResult } from '../agent/types.ts';
import type { AgentTools } from '../agent/service.ts';
import { ErrorCode } from '../protocol/errors.ts';
import type { ChannelAgent, ChannelTurnOptions } from './types.ts';

export interface TurnAgent {
  turn(text: string, signal: AbortSignal): Promise<TurnResult>;
}

export interface ConversationKey {
  conversation: string;
  tools: boolean;
  /** Whose conversation: tags its stored turns and picks a per-channel store partition. */
  channel?: string;
  user?: string;
}

interface Slot {
  agent: TurnAgent;
  tail: Promise<unknown>;
  busy: number;
}

export function perConversationAgent(make: (k: ConversationKey) => TurnAgent, o: { maxConversations?: number; fallback?: ConversationKey } = {}): ChannelAgent & { readonly size: number } {
  const max = o.maxConversations ?? 1000;
  const slots = new Map<string, Slot>();
  const slotOf = (k: ConversationKey): Slot => {
    const id = `${k.tools ? 't' : 'n'}:${k.conversation}`;
    let s = slots.get(id);
    if (s) slots.delete(id); // re-inserted: Map order = least recently used first
    else s = { agent: make(k), tail: Promise.resolve(), busy: 0 };
    slots.set(id, s);
    for (const [key, v] of slots) {
      if (slots.size <= max) break;
      if (v.busy === 0 && v !== s) slots.delete(key);
    }
    return s;
  };
  return {
    channelTurns: true,
    get size() {
      return slots.size;
    },
    turn(text: string, signal: AbortSignal, opts?: ChannelTurnOptions) {
      const s = slotOf(opts ? { conversation: opts.conversation, tools: opts.tools, channel: opts.channel, user: opts.user } : (o.fallback ?? { conversation: 'default', tools: true }));
      s.busy++;
      const run = s.tail.then(() => {
        signal.throwIfAborted();
        return s.agent.turn(text, signal);
      });
      s.tail = run.catch(() => {});
      return run.finally(() => s.busy--);
    },
  };
}

/**
 * The tools of a viewer's agent (spec §5.3 viewer: "cannot trigger tools or skills"): none are listed, so
 * the prompt offers none and the validator rejects any tool_call as an unknown capability; a call that
 * reached `call` anyway is refused as a policy denial.
 */
export const NO_AGENT_TOOLS: AgentTools = {
  list: () => [],
  call: async (name) => ({ ok: false, code: ErrorCode.PolicyDenied, message: `Policy denied: tool ${name} is not available to a read-only (viewer) channel user` }),
};
