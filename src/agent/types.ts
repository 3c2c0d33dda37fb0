// The agent loop's ports: it knows the model, the validator, the tool gates, history, audit and
// telemetry only through these, so one loop serves `claw chat`, queue channels and tests alike.
import type { TelemetrySink, ToolResult } from '../kernel/ports.ts';
import type { Rejection, Verdict } from '../femtoclaw/verdict.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** What a provider chain answered: text, or a native tool call mapped to one call (docs/providers.md). */
export interface ModelOutput {
  text: string;
  toolCall?: { name: string; arguments: string };
  usage?: { input_tokens: number; output_tokens: number };
  provider?: string;
}

export type ToolOutcome = { ok: true; result: ToolResult } | { ok: false; code: number; message: string; data?: unknown };

export interface AuditSink {
  record(kind: string, fields: Record<string, unknown>): void;
}

export interface History {
  /** The conversation so far, oldest first (no system prompt). */
  messages(): ChatMessage[];
  append(m: ChatMessage): Promise<void>;
}

export interface LoopLimits {
  /** Rejected outputs fed back as corrections before the turn gives up (FemtoClaw §12). */
  maxCorrections: number;
  /** Tool calls per turn before the loop stops asking the model. */
  maxToolSteps: number;
  /** A tool result is cut to this many characters before the model sees it. */
  maxToolResultChars: number;
  /** Raw model output kept in an audit record, in characters. */
  maxAuditOutputChars: number;
}

export const DEFAULT_LOOP_LIMITS: LoopLimits = { maxCorrections: 2, maxToolSteps: 8, maxToolResultChars: 4000, maxAuditOutputChars: 16_384 };

export interface LoopDeps {
  systemPrompt: string;
  complete(messages: ChatMessage[], signal: AbortSignal): Promise<ModelOutput>;
  validate(raw: string): Verdict;
  correction(r: Rejection): string;
  callTool(tool: string, args: Record<string, unknown>, requestId: string, signal: AbortSignal): Promise<ToolOutcome>;
  history: History;
  audit: AuditSink;
  telemetry: TelemetrySink;
  redact(text: string): string;
  newId(): string;
  now(): number;
  limits?: Partial<LoopLimits>;
}

export interface ToolStep {
  tool: string;
  request_id: string;
  ok: boolean;
  code?: number;
}

export interface TurnResult {
  reply: string;
  /** `message`: the model answered; `gave_up`: too many rejected outputs; `step_limit`: too many tool calls. */
  outcome: 'message' | 'gave_up' | 'step_limit';
  toolCalls: ToolStep[];
  rejections: number;
}
