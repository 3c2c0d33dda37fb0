// What a protocol adapter produces from one response, before the client adds provider and model.
import type { NativeToolCall } from '../kernel/ports.ts';
import { malformed } from './failure.ts';

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
  /**
   * How many events so far carried something of the answer (text, reasoning, a tool call, the finish, usage).
   * An event that did not (an empty delta some servers send as a keep-alive) is not progress for the idle
   * limit. Absent: every event with data is progress.
   */
  readonly advanced?: number;
  /** The stream ended; throws 'truncated' if it ended before the protocol's end marker. */
  finish(): Completion;
}

/**
 * A usage count as reported: a non-negative number no larger than any model's window could make it. Beyond
 * 10^9 it is no count (the estimate is charged instead): 1e308 + 1e308 is Infinity, which the ledger file
 * stores as null and then refuses to read, stopping every later request to the provider.
 */
export const num = (v: unknown): number | undefined => (typeof v === 'number' && v >= 0 && v <= 1e9 ? v : undefined);

export const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The most tool calls (Anthropic: content blocks) one answer may number. A streamed chunk names its call by
 * index; the calls are kept in an array, and every pass over an array visits each index up to its length, so
 * an index of 2³² from a hostile server would stall the event loop for hours: beyond this it is malformed.
 */
export const MAX_CALL_INDEX = 255;

/** A streamed call's index, checked: an integer from 0 to MAX_CALL_INDEX. */
export function callIndex(i: unknown): number {
  if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i > MAX_CALL_INDEX) throw malformed(`tool call index ${String(i).slice(0, 24)} is not an integer from 0 to ${MAX_CALL_INDEX}`);
  return i;
}

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
