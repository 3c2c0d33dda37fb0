// What flows through the gates for one claw.tool.call (spec §9.3.2), and what the gates need.
import type { SandboxSpec } from '../manifest/schema/index.ts';
import type { NamedPolicy } from '../policy/evaluate.ts';
import type { ResolvedPrimitive } from '../manifest/resolved.ts';
import type { BoundTool } from '../tools/types.ts';
import type { ApprovalBroker } from '../kernel/approvals.ts';
import type { TokenLedger } from '../kernel/ledger.ts';
import type { Clock, Logger } from '../kernel/ports.ts';
import type { JsonRpcNotification } from '../protocol/jsonrpc.ts';
import type { RateLimiter } from '../policy/rate-limit.ts';

export type { NamedPolicy };

export interface ToolCall {
  tool: BoundTool;
  args: Record<string, unknown>;
  requestId: string;
  /** context.identity: the calling agent's Identity name. */
  identity: string;
  /** The skill the call is made for, when it comes from one (policy `conditions.skill`). */
  skill?: string;
  /** Rules governing the call, in evaluation order (the tool's policy_ref first, then the manifest's). */
  policies: NamedPolicy[];
  /** A context.policy override: its decision can only make the outcome stricter. */
  overridePolicy?: NamedPolicy;
  /** The effective sandbox (the tool's, narrowed by a context.sandbox override). */
  sandbox: SandboxSpec;
  /** Aborted at session end; the call is cancelled with it. */
  signal: AbortSignal;
}

/** Gate outcomes that later gates act on. */
export interface GateState {
  approval?: { by: string; reason?: string; timeoutMs: number; defaultIfTimeout: 'deny' | 'allow' };
  /** Set by an `audit-only` rule: the call runs and is recorded in detail. */
  audit?: { ruleId: string; policy: string };
}

export interface GateDeps {
  identity: ResolvedPrimitive;
  /** Provider a tool call is charged to for quota (docs/tools.md: the agent's primary provider). */
  chargedProvider?: ResolvedPrimitive;
  approvals: ApprovalBroker;
  /** Announce a pending approval to the operator/channel (claw.tool.approval_requested). */
  announce(n: JsonRpcNotification): void;
  ledger: TokenLedger;
  rateLimiter: RateLimiter;
  clock: Clock;
  log: Logger;
  knownSecrets(): Iterable<string>;
  /** Approval wait for `supervised` autonomy, which has no rule of its own. */
  defaultApprovalTimeoutMs: number;
  /** Grace after SIGTERM before SIGKILL, and the ceiling we wait for a tool to stop. */
  killGraceMs: number;
}
