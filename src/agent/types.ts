// The agent loop's ports: it knows the model, the validator, the tool gates, history, audit and
// telemetry only through these, so one loop serves `claw chat`, queue channels and tests alike.
import type { ChatMessage, ProviderResponse, TelemetrySink } from '../kernel/ports.ts';
import type { ToolResult } from '../tools/types.ts';
import type { Rejection, Verdict } from '../femtoclaw/verdict.ts';
import type { ModelResponse, OutputMode } from '../provider/output-mode.ts';

export type { ChatMessage };

/** What a provider chain answered: text, or a native tool call (docs/providers.md), and in which mode. */
export type ModelOutput = Pick<ProviderResponse, 'text' | 'toolCall' | 'usage'> &
  Pick<ModelResponse, 'mode' | 'fallbacks' | 'notices'> & { provider?: string; toolCallCount?: number };

export type ToolOutcome = { ok: true; result: ToolResult } | { ok: false; code: number; message: string; data?: unknown };

/** Records one model output and its verdict (src/audit/protocol-audit.ts recordValidation). */
export type RecordVerdict = (raw: string, verdict: Verdict, ctx: VerdictContext) => void;

export interface VerdictContext {
  turn: string;
  provider?: string;
  /** The output mode the answer came in (docs/agent.md "Output modes"). */
  mode?: OutputMode;
  /** The provider's own output when the protocol message was built from it (native answers). */
  providerOutput?: string;
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
  /** A rejected output is shown back to the model (before its correction) cut to this many characters. */
  maxRejectedChars: number;
}

export const DEFAULT_LOOP_LIMITS: LoopLimits = { maxCorrections: 2, maxToolSteps: 8, maxToolResultChars: 4000, maxRejectedChars: 1000 };

export interface LoopDeps {
  systemPrompt: string;
  complete(messages: ChatMessage[], signal: AbortSignal): Promise<ModelOutput>;
  validate(raw: string): Verdict;
  /** The correction for a rejection, worded for the mode the rejected answer came in. */
  correction(r: Rejection, mode?: OutputMode): string;
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
  /** The validated arguments (kept in memory for the caller, e.g. `claw eval`; never logged from here). */
  args: Record<string, unknown>;
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
  /** Requests to the provider chain in this turn. */
  modelCalls?: number;
  /** Tokens the responses reported (0 when none did). */
  tokens?: { input: number; output: number };
  /** `gave_up`: why, in words (`the model answered 3× without a valid tool call or message: text around JSON`). */
  problem?: string;
  /** Lines the user should see besides the reply: a provider that failed before a fallback answered, a refused mode. */
  notices?: string[];
  /** The mode of the last answer. */
  mode?: OutputMode;
  /** The provider that gave the last answer. */
  provider?: string;
}
