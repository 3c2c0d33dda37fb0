// The kernel's ports. The kernel knows these interfaces only; adapters under src/transports,
// src/tools, src/memory, src/provider implement them and targets/ wire them together.
import type { JsonRpcMessage } from '../protocol/jsonrpc.ts';

/** What a transport hands the router: a frame's text or a framing failure, and how to answer it. */
export interface InboundFrame {
  payload: { text: string } | { error: 'oversize'; bytes: number; limit: number } | { error: 'encoding' };
  /** Send the reply for this frame back to its sender (the router is the only caller). */
  reply(message: JsonRpcMessage | JsonRpcMessage[]): void;
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

// Ports later capabilities fill in. Declared now so the kernel's seams are fixed.

export interface ToolResult {
  content: { type: string; [k: string]: unknown }[];
  isError?: boolean;
  [k: string]: unknown;
}
export interface ToolBackend {
  /** Execute one call; `signal` aborts it (timeout, shutdown). */
  call(name: string, args: unknown, ctx: { signal: AbortSignal; requestId?: string }): Promise<ToolResult>;
  close?(): Promise<void>;
}

export interface MemoryEntryIn {
  content: string;
  metadata?: Record<string, unknown>;
  key?: string;
}
export interface MemoryEntryOut {
  id: string;
  content: string;
  score?: number;
  timestamp: string;
  metadata?: Record<string, unknown>;
}
export interface MemoryStore {
  store(entries: MemoryEntryIn[]): Promise<string[]>;
  query(q: { type: string; text?: string; key?: string; from?: string; to?: string; top_k?: number }): Promise<MemoryEntryOut[]>;
  compact(opts: Record<string, unknown>): Promise<{ entries_before: number; entries_after: number }>;
  close(): Promise<void>;
}

export interface ProviderClient {
  complete(req: { messages: { role: string; content: string }[]; signal: AbortSignal }): Promise<{
    content: string;
    usage?: { input_tokens: number; output_tokens: number };
  }>;
}
