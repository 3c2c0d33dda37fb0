// The kernel's ports. The kernel knows these interfaces only; adapters under src/transports,
// src/tools, src/memory, src/provider implement them and targets/ wire them together.
import type { JsonRpcMessage } from '../protocol/jsonrpc.ts';

/** What a transport hands the router: a frame's text or a framing failure, and how to answer it. */
export interface InboundFrame {
  payload: { text: string } | { error: 'oversize'; bytes: number; limit: number } | { error: 'encoding' };
  /** Send the reply for this frame back to its sender (the router is the only caller). */
  reply(message: JsonRpcMessage | JsonRpcMessage[]): void;
  /**
   * Called by the router with the frame's parsed JSON, before any of it runs, when the text parsed (and passed
   * the depth bound). A transport that must know the frame's shape (HTTP: 202 when nothing will be answered)
   * reads it here instead of parsing the text again: a large frame costs its parse's heap once.
   */
  parsed?(value: unknown): void;
}

export interface Transport {
  readonly name: string;
  /** Begin delivering frames. */
  start(deliver: (frame: InboundFrame) => void): void;
  /** Agent-initiated notification to whoever listens on this transport (e.g. claw.heartbeat). */
  notify(message: JsonRpcMessage): void;
  /** Resolves when the peer has gone (stdin closed, directory removed, broker session ended). */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

export interface Clock {
  now(): number; // ms since epoch
  monotonic(): number; // ms, monotonic
  setInterval(fn: () => void, ms: number): { cancel(): void };
  setTimeout(fn: () => void, ms: number): { cancel(): void };
}

/** Secret values come only through this port (runtime profile §7). */
export interface SecretStore {
  /** Returns the value or undefined when this store does not have it. */
  get(ref: string): Promise<string | undefined>;
}

/** Structured logging to stderr; never to the protocol stream. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/**
 * Where the kernel and its modules report telemetry events (spec §5.11). Emit-only and never throws;
 * the implementation (src/telemetry) filters by category and sampling and never blocks the caller.
 */
export interface TelemetrySink {
  emit(category: string, event: string, fields?: Record<string, unknown>): void;
  /** metrics.latency_histogram: one sample of an operation's duration. */
  latency(operation: string, ms: number): void;
  /** metrics.token_usage: real counts from one provider response. */
  tokenUsage(provider: string, input: number, output: number): void;
  close(): Promise<unknown>;
}

/** The sink of an agent without a Telemetry primitive: behaves identically, emits nothing (§5.11). */
export const NO_TELEMETRY: TelemetrySink = {
  emit() {},
  latency() {},
  tokenUsage() {},
  close: async () => {},
};

/** A tool call as the provider's native tool-calling API returned it (docs/providers.md). */
export interface NativeToolCall {
  /** The API's id for the call; echo it back on the tool result (role "tool", toolCallId). */
  id?: string;
  name: string;
  /** Raw JSON text exactly as the API sent it, never re-serialized, so validation sees what the model wrote. */
  arguments: string;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** assistant: the native call this turn made, sent back so the API sees its own call. */
  toolCall?: NativeToolCall;
  /** tool: the call this message answers; without it the message is sent as a user turn. */
  toolCallId?: string;
}

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  input_schema: Record<string, unknown>;
}

export interface ProviderRequest {
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  signal: AbortSignal;
  /** Streaming text as it arrives; `from` changes when a retry or a fallback starts a fresh answer. */
  onDelta?: (text: string, from: { provider: string; attempt: number }) => void;
}

export interface ProviderResponse {
  /** Text the model produced (a FemtoClaw candidate when it did not call a tool natively). */
  text: string;
  /** The first native tool call; `toolCallCount` says how many the response held (FemtoClaw wants one). */
  toolCall?: NativeToolCall;
  toolCallCount: number;
  /** Real counts from the response, absent when the API reported none. */
  usage?: { input_tokens: number; output_tokens: number };
  /** Provider (metadata.name) that answered, and its configured model. */
  provider: string;
  model: string;
}

export interface ProviderClient {
  complete(req: ProviderRequest): Promise<ProviderResponse>;
}
