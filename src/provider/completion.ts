// What a protocol adapter produces from one response, before the client adds provider and model.
import type { NativeToolCall } from '../kernel/ports.ts';

export interface Completion {
  text: string;
  toolCall?: NativeToolCall;
  toolCallCount: number;
  usage?: { input_tokens: number; output_tokens: number };
}

/** Streaming decoder of one protocol: events in, a Completion out (or a ProviderFailure). */
export interface StreamDecoder {
  event(e: { event: string; data: string }): void;
  /** The end marker ([DONE], message_stop) has been seen. */
  readonly done: boolean;
  /** The stream ended; throws 'truncated' if it ended before the protocol's end marker. */
  finish(): Completion;
}

export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

export const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Tool calls gathered (possibly piecewise) in response order. */
export interface CallSlot {
  id: string;
  name: string;
  args: string;
}

export function firstCall(slots: readonly (CallSlot | undefined)[]): Pick<Completion, 'toolCall' | 'toolCallCount'> {
  const calls = slots.filter((s): s is CallSlot => s !== undefined);
  if (calls.length === 0) return { toolCallCount: 0 };
  const c = calls[0];
  return { toolCall: c.id ? { id: c.id, name: c.name, arguments: c.args } : { name: c.name, arguments: c.args }, toolCallCount: calls.length };
}
