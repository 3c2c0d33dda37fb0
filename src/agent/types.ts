// The agent loop's ports: it knows the model, the validator, the tool gates, history, audit and
// telemetry only through these, so one loop serves `claw chat`, queue channels and tests alike.
import type { ChatMessage, ProviderResponse, TelemetrySink } from '../kernel/ports.ts';
import type { ToolResult } from '../tools/types.ts';
import type { Rejection, Verdict } from '../femtoclaw/verdict.ts';

export type { ChatMessage };

/** What a provider chain answered: text, or a native tool call (docs/providers.md). */
export type ModelOutput = Pick<ProviderResponse, 'text' | 'toolCall' | 'usage'> & { provider?: string; toolCallCount?: number };

export type ToolOutcome = { ok: true; result: ToolResult } | { ok: false; code: number; message: string; data?: unknown };

/** Records one model output and its verdict (src/audit/protocol-audit.ts recordValidation). */
export type RecordVerdict = (raw: string, verdict: Verdict, ctx: { turn: string; provider?: string }) => void;

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
}

export const DEFAULT_LOOP_LIMITS: LoopLimits = { maxCorrections: 2, maxToolSteps: 8, maxToolResultChars: 4000 };

export interface LoopDeps {
  systemPrompt: string;
  complete(messages: ChatMessage[], signal: AbortSignal): Promise<ModelOutput>;
  validate(raw: string): Verdict;
  correction(r: Rejection): string;
  callTool(tool: string, args: Record<string, unknown>, requestId: string, signal: AbortSignal): Promise<ToolOutcome>;
  history: History;
  recordVerdict: RecordVerdict;
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
