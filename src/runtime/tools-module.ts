// Level 2 (spec §11): claw.tool.call / approve / deny as a kernel module. STARTING opens the session's
// tools (./tool-session.ts: binds them and checks that this board provides the declared sandbox levels);
// STOPPING releases approvals, MCP servers and the audit log.
import * as v from 'valibot';
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { issuesData } from '../protocol/wire.ts';
import { approvalParams } from '../protocol/wire-tools.ts';
import { ApprovalBroker } from '../kernel/approvals.ts';
import type { DedupStore } from '../kernel/idempotency.ts';
import { TokenLedger, type LedgerStore } from '../kernel/ledger.ts';
import { RateLimiter } from '../policy/rate-limit.ts';
import type { ToolEnvironment } from './tool-deps.ts';
import { openToolSession, type ToolSession, type ToolsShared } from './tool-session.ts';
import type { KernelModule } from '../kernel/agent.ts';
import type { Clock, Logger } from '../kernel/ports.ts';
import type { JsonRpcNotification } from '../protocol/jsonrpc.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { Redactor } from '../log/redactor.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { MethodSpec } from '../kernel/methods/index.ts';
import type { AuditSession } from '../audit/session.ts';
import type { AgentTools } from '../agent/service.ts';
import type { CompositeBinder } from '../agent/composite.ts';

export interface ToolsModuleDeps {
  config: RuntimeConfig;
  clock: Clock;
  log: Logger;
  redactor: Redactor;
  notify(n: JsonRpcNotification): void;
  ledgerStore: LedgerStore;
  /** Where settled tool-call outcomes persist (the memory database while one is open), looked up per call. */
  dedupStore?: () => DedupStore | undefined;
  /** Pending while that database is still to be opened (it opens on first need): a call waits for it. */
  dedupReady?: () => Promise<void> | undefined;
  /** The tool layer for a manifest: runner, MCP, builtins, and this board's isolation answer. */
  environment(m: ResolvedManifest): Promise<ToolEnvironment>;
  /**
   * The session's audit log (docs/audit.md), opened at STARTING; undefined when audit is off. The
   * FemtoClaw agent loop turns it on (FemtoClaw §17), so the caller knows whether a loop runs here.
   */
  openAudit?(m: ResolvedManifest): AuditSession | undefined;
  /** Binds `composite: true` tools for a manifest (src/agent/composite.ts); without it they are refused at STARTING. */
  composites?(m: ResolvedManifest): CompositeBinder;
}

/** The tools module as the rest of the runtime sees it: the kernel methods, and the agent loop's gate path. */
export interface ToolsModule extends KernelModule {
  /** This session's bound tools and the one gate path, for the agent loop (undefined before STARTING). */
  agentTools(): AgentTools | undefined;
  /** This session's audit log, when audit is on. */
  audit(): AuditSession | undefined;
  /** Resolves when the pending approval `requestId` is decided or expires; undefined when none is pending. */
  approvalSettled?(requestId: string): Promise<unknown> | undefined;
}

export function toolsModule(d: ToolsModuleDeps): ToolsModule {
  const shared: ToolsShared = { d, approvals: new ApprovalBroker(d.clock), ledger: new TokenLedger(d.ledgerStore, d.clock), rateLimiter: new RateLimiter() };
  /** The running session's tools: set at start(), cleared at stop(). */
  let current: ToolSession | undefined;

  const decide = (decision: 'approved' | 'denied'): MethodSpec => ({
    level: 2,
    states: ['READY', 'STOPPING'],
    handler(params) {
      const p = v.safeParse(approvalParams, params);
      if (!p.success) throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params for claw.tool.${decision === 'approved' ? 'approve' : 'deny'}`, issuesData(p.issues));
      // spec §9.3.2: an unknown request_id is acknowledged: false, not an error.
      return { acknowledged: shared.approvals.decide(p.output.request_id, decision, p.output.reason) };
    },
  });

  return {
    name: 'tools',
    methods: {
      // READY only (the agent checks the state), so a session is open.
      'claw.tool.call': { level: 2, states: ['READY'], handler: (params) => current!.call(params) },
      'claw.tool.approve': decide('approved'),
      'claw.tool.deny': decide('denied'),
    },
    agentTools: () => current?.agentTools,
    audit: () => current?.audit,
    // A second wait on a pending request_id shares the first one's outcome (kernel/approvals.ts).
    approvalSettled: (id) => (shared.approvals.has(id) ? shared.approvals.wait(id, 0) : undefined),
    async start(s, core) {
      current = await openToolSession(shared, s, core.telemetry);
    },
    async stop() {
      shared.approvals.cancelAll();
      const closing = current;
      current = undefined;
      await closing?.close();
    },
  };
}
