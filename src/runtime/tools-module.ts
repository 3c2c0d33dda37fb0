// Level 2 (spec §11): claw.tool.call / approve / deny as a kernel module. STARTING binds the tools
// and checks that this board provides the declared sandbox levels; STOPPING releases approvals
// and MCP servers.
import * as v from 'valibot';
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { issuesData } from '../protocol/wire.ts';
import { approvalParams, fastToolCallParams, toolCallParams, type ToolCallParams } from '../protocol/wire-tools.ts';
import { canonicalJson } from '../protocol/canonical-json.ts';
import { ApprovalBroker } from '../kernel/approvals.ts';
import { DedupCache, DEFAULT_DEDUP_WINDOW_MS, type DedupStore } from '../kernel/idempotency.ts';
import { TokenLedger, type LedgerStore } from '../kernel/ledger.ts';
import { RateLimiter } from '../policy/rate-limit.ts';
import { composeForCall } from '../policy/evaluate.ts';
import { resolveRef } from '../manifest/refs.ts';
import { narrowSandbox } from '../gates/narrow-sandbox.ts';
import { runGatesNow, type PipelineDeps } from '../gates/pipeline.ts';
import { bindTools, type RegisteredTool } from '../tools/registry.ts';
import type { ToolEnvironment } from './tool-deps.ts';
import { DEFAULT_GRACE_MS } from '../sandbox/spec-view.ts';
import { drainRunDirs } from '../sandbox/run-dirs.ts';
import { sandboxOf } from './sandbox-of.ts';
import { restrictedShellWarning } from '../sandbox/shell-rules.ts';
import { timed } from './timed.ts';
import type { KernelModule, Session } from '../kernel/agent.ts';
import { NO_TELEMETRY, type Clock, type Logger, type TelemetrySink } from '../kernel/ports.ts';
import type { JsonRpcNotification } from '../protocol/jsonrpc.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { Redactor } from '../log/redactor.ts';
import type { SandboxSpec } from '../manifest/schema/index.ts';
import type { ResolvedManifest, ResolvedPrimitive } from '../manifest/resolved.ts';
import type { MethodSpec } from '../kernel/methods/index.ts';
import type { NamedPolicy, ToolCall } from '../gates/call.ts';
import type { ToolResult } from '../tools/types.ts';
import type { AuditSession } from '../audit/session.ts';
import type { CallOrigin } from '../audit/gate-audit.ts';
import type { AgentTools, AgentToolInfo } from '../agent/service.ts';
import type { ToolImpl } from '../tools/types.ts';
import type { CompositeBinder } from '../agent/composite.ts';

interface PreparedTool {
  reg: RegisteredTool;
  /** The tool's sandbox (sandbox_ref or the manifest's), before any context.sandbox narrowing. */
  sandbox: SandboxSpec;
  /** Governing policies in evaluation order (the tool's policy_ref first), or why there are none. */
  policies: NamedPolicy[] | Error;
}

export interface ToolsModuleDeps {
  config: RuntimeConfig;
  clock: Clock;
  log: Logger;
  redactor: Redactor;
  notify(n: JsonRpcNotification): void;
  ledgerStore: LedgerStore;
  /** Where settled tool-call outcomes persist (the memory database while one is open), looked up per call. */
  dedupStore?: () => DedupStore | undefined;
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
}

export function toolsModule(d: ToolsModuleDeps): ToolsModule {
  const approvals = new ApprovalBroker(d.clock);
  const ledger = new TokenLedger(d.ledgerStore, d.clock);
  const rateLimiter = new RateLimiter();
  let dedup: DedupCache<ToolCallParams>;
  let tools = new Map<string, RegisteredTool>();
  let session: Session | undefined;
  let env: ToolEnvironment | undefined;

  const pipelineDeps = (m: ResolvedManifest): PipelineDeps => {
    // This board's answer for a (sandbox, implementation) pair does not change within a session:
    // asked once per tool, not once per call. A narrowed sandbox is a new object, asked anew.
    const isolation = new WeakMap<SandboxSpec, Map<ToolImpl, string | undefined>>();
    return pipelineDepsWith(m, (sb, impl) => {
      let bySandbox = isolation.get(sb);
      if (!bySandbox) isolation.set(sb, (bySandbox = new Map()));
      if (bySandbox.has(impl)) return bySandbox.get(impl);
      const why = env!.isolationProblem(sb, impl);
      bySandbox.set(impl, why);
      return why;
    });
  };
  const pipelineDepsWith = (m: ResolvedManifest, isolationProblem: PipelineDeps['isolationProblem']): PipelineDeps => ({
    identity: m.identity,
    chargedProvider: m.providers[0],
    approvals,
    announce: d.notify,
    ledger,
    rateLimiter,
    clock: d.clock,
    log: d.log,
    knownSecrets: () => d.redactor.known(),
    defaultApprovalTimeoutMs: (d.config.approvals?.default_timeout_seconds ?? 300) * 1000,
    killGraceMs: d.config.sandbox?.kill_grace_ms ?? DEFAULT_GRACE_MS,
    isolationProblem,
    redactValue: (x) => d.redactor.redactValue(x),
    redactText: (s) => d.redactor.redact(s),
  });
  /** Per session: the gates' dependencies, and per tool what only the manifest decides. */
  let deps: PipelineDeps | undefined;
  let prepared = new Map<string, PreparedTool>();
  let audit: AuditSession | undefined;
  let telemetry: TelemetrySink = NO_TELEMETRY;
  let composites: CompositeBinder | undefined;

  /**
   * The one gate path (issue 6: "one code path, not two"): claw.tool.call from an operator and a
   * tool_call from the agent loop both come here. With audit on, the auditor wraps the same call
   * object the gates see (docs/audit.md "Wiring").
   */
  const execute = (call: ToolCall, check: PreparedTool['reg']['check'], origin: CallOrigin): ToolResult | Promise<ToolResult> => {
    const t = telemetry;
    if (t === NO_TELEMETRY && !audit) return runGatesNow(call, check, deps!);
    const go = () => runGatesNow(call, check, deps!);
    if (t === NO_TELEMETRY) return audit!.auditor.run(call, origin, go);
    // §5.11 tool_calls: name, duration, status, error code (arguments and result subject to `redaction`).
    return timed(
      d.clock,
      () => (audit ? audit.auditor.run(call, origin, go) : go()),
      (duration_ms, result, err) => {
        t.latency(`tool:${call.tool.name}`, duration_ms);
        t.emit('tool_calls', 'tool.call', {
          tool: call.tool.name,
          request_id: call.requestId,
          origin,
          duration_ms,
          status: err ? 'error' : result?.isError ? 'tool_error' : 'ok',
          ...(err instanceof ProtocolError ? { code: err.code } : {}),
          arguments: call.args,
          ...(result ? { result: resultText(result) } : {}),
        });
      },
    );
  };

  const call: MethodSpec = {
    level: 2,
    states: ['READY'],
    // Not async: a call whose gates and tool are all synchronous (an in-process builtin with no
    // approval or quota to wait for) is answered without a promise (BENCH.md "Tool calls").
    handler(params) {
      const s = session!;
      const m = s.manifest;
      let p = fastToolCallParams(params);
      if (!p) {
        const r = v.safeParse(toolCallParams, params);
        if (!r.success) throw new ProtocolError(ErrorCode.InvalidParams, 'Invalid params for claw.tool.call', issuesData(r.issues));
        p = r.output;
      }
      const { name, arguments: args, context } = p;
      const t = prepared.get(name);
      if (!t) throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: unknown tool "${name}"`, { tool: name, available: [...tools.keys()] });
      if (context.identity !== m.identity.name) {
        throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: context.identity "${context.identity}" is not this agent (${m.identity.name})`, {
          identity: context.identity,
        });
      }
      let sandbox = t.sandbox;
      if (context.sandbox) sandbox = narrowSandbox(sandbox, lookup(m, 'Sandbox', context.sandbox).spec as SandboxSpec);
      const policies = t.policies;
      if (policies instanceof Error) throw policies;
      const override = context.policy ? lookup(m, 'Policy', context.policy) : undefined;
      // The params are the fingerprint's source: made canonical only when the request_id repeats.
      const r = dedup.run(context.request_id, p, () =>
        execute(
          {
            tool: t.reg.bound,
            args,
            requestId: context.request_id,
            identity: context.identity,
            skill: context.skill,
            policies,
            overridePolicy: override ? { name: override.name, spec: override.spec as any } : undefined,
            sandbox,
            signal: s.abort.signal,
          },
          t.reg.check,
          'operator',
        ),
      );
      if ('conflict' in r) {
        throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: request_id "${context.request_id}" was already used for a different call`, {
          request_id: context.request_id,
        });
      }
      if (r.reused) d.log.info('duplicate request_id: answering with the first result', { request_id: context.request_id, tool: name });
      return r.outcome;
    },
  };

  const decide = (decision: 'approved' | 'denied'): MethodSpec => ({
    level: 2,
    states: ['READY', 'STOPPING'],
    handler(params) {
      const p = v.safeParse(approvalParams, params);
      if (!p.success) throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params for claw.tool.${decision === 'approved' ? 'approve' : 'deny'}`, issuesData(p.issues));
      // spec §9.3.2: an unknown request_id is acknowledged: false, not an error.
      return { acknowledged: approvals.decide(p.output.request_id, decision, p.output.reason) };
    },
  });

  const agentTools: AgentTools = {
    list: () =>
      [...prepared.values()].map(
        (t): AgentToolInfo => ({ name: t.reg.bound.name, description: t.reg.bound.description, input_schema: t.reg.bound.inputSchema, check: t.reg.check }),
      ),
    async call(name, args, o) {
      const s = session;
      const t = prepared.get(name);
      if (!s || !t) return { ok: false, code: ErrorCode.InvalidParams, message: `Invalid params: unknown tool "${name}"` };
      try {
        if (t.policies instanceof Error) throw t.policies;
        const result = await execute(
          {
            tool: t.reg.bound,
            args,
            requestId: o.requestId,
            identity: s.manifest.identity.name,
            skill: o.skill,
            policies: t.policies,
            // §5.5 permissions.approval_required: a stricter-only override, like context.policy.
            overridePolicy: o.requireApproval ? skillApprovalPolicy(o.skill) : undefined,
            sandbox: o.narrow ? narrowSandbox(t.sandbox, o.narrow) : t.sandbox,
            signal: AbortSignal.any ? AbortSignal.any([s.abort.signal, o.signal]) : s.abort.signal,
          },
          t.reg.check,
          'agent',
        );
        return { ok: true, result };
      } catch (e) {
        if (e instanceof ProtocolError) return { ok: false, code: e.code, message: e.message, data: e.data };
        throw e;
      }
    },
  };

  return {
    name: 'tools',
    methods: { 'claw.tool.call': call, 'claw.tool.approve': decide('approved'), 'claw.tool.deny': decide('denied') },
    agentTools: () => (session ? agentTools : undefined),
    audit: () => audit,
    async start(s, core) {
      session = s;
      telemetry = core.telemetry;
      tools = new Map();
      prepared = new Map();
      audit = d.openAudit?.(s.manifest);
      deps = { ...pipelineDeps(s.manifest), observe: audit?.auditor.observe };
      dedup = new DedupCache(d.clock, d.config.idempotency?.window_ms ?? DEFAULT_DEDUP_WINDOW_MS, d.dedupStore, callFingerprint);
      // Below Level 2 the tool methods answer -32601 (spec §11): nothing to bind or check.
      if (s.level < 2) return;
      const m = s.manifest;
      env = await d.environment(m);
      try {
        composites = m.tools.some((t) => t.spec.composite === true) ? d.composites?.(m) : undefined;
        tools = await bindTools(m, d.config, composites ? { ...env.registry, composite: composites } : env.registry);
      } catch (e) {
        throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: ${(e as Error).message}`, { state: 'ERROR' });
      }
      // A level or feature this board cannot provide is refused now, never silently downgraded.
      const refusals = new Set<string>();
      const sandboxes = new Map<string, SandboxSpec>();
      for (const [name, t] of tools) {
        const sb = sandboxOf(m, t.bound.sandboxRef);
        sandboxes.set(name, sb);
        // Through the session's cache: the first call of each tool reuses this answer.
        const why = deps!.isolationProblem(sb, t.bound.impl);
        if (why) refusals.add(`tool ${t.bound.name}: ${why}`);
        // Allowed downgrades and what enforces what: said once per tool at STARTING, never silent.
        else for (const note of env.isolationNotes(sb, t.bound.impl)) d.log.info('sandbox', { tool: t.bound.name, sandbox_level: sb.level, note });
        const shellWarning = t.bound.impl.isShell ? restrictedShellWarning(sb.capabilities?.shell) : undefined;
        if (shellWarning) d.log.warn('sandbox', { tool: t.bound.name, warning: shellWarning });
      }
      if (refusals.size > 0) {
        await Promise.all([...tools.values()].map((t) => t.bound.impl.close?.().catch(() => {})));
        await env.registry.mcp?.close().catch(() => {});
        throw new ProtocolError(ErrorCode.SandboxDenied, `Sandbox denied: ${[...refusals].join('; ')}`, { state: 'ERROR' });
      }
      // What only the manifest decides, once per tool instead of once per call.
      const manifestPolicies = m.policies.map((x) => ({ name: x.name, spec: x.spec as any }));
      for (const [name, reg] of tools) {
        const policyRef = reg.bound.policyRef ? declared(m, 'Policy', reg.bound.policyRef)?.name : undefined;
        let policies: NamedPolicy[] | Error;
        try {
          policies = composeForCall(manifestPolicies, policyRef);
        } catch (e) {
          policies = e as Error; // answered per call, as before (the loader's cross-checks should make this unreachable)
        }
        prepared.set(name, { reg, sandbox: sandboxes.get(name)!, policies });
      }
      // Composite tools call back into the gate path below (docs/agent.md "Composite tools").
      composites?.attach({ tools: agentTools, telemetry: core.telemetry, recordVerdict: audit ? (raw, v, c) => audit?.recordVerdict(raw, v, c) : undefined });
      d.log.info('tools bound', { tools: [...tools.values()].map((t) => `${t.bound.name}:${t.bound.impl.kind}`) });
    },
    async stop() {
      approvals.cancelAll();
      composites?.detach();
      composites = undefined;
      // The file closes synchronously; awaiting lets an audit mirror (sqlite, webhook) flush, bounded by its own timeout.
      await audit?.close();
      audit = undefined;
      telemetry = NO_TELEMETRY;
      await Promise.all([...tools.values()].map((t) => t.bound.impl.close?.().catch(() => {})));
      await env?.registry.mcp?.close().catch(() => {});
      drainRunDirs(); // the empty run directories kept for reuse (sandbox/run-dirs.ts)
      env = undefined;
      session = undefined;
      deps = undefined;
      prepared = new Map();
    },
  };
}

/** What makes two claw.tool.call the same call for a repeated request_id (runtime profile §5). */
function callFingerprint(p: ToolCallParams): string {
  return canonicalJson({ name: p.name, args: p.arguments, sandbox: p.context.sandbox, policy: p.context.policy });
}

/** A tool result's text for telemetry, bounded (telemetry carries results only as a summary). */
function resultText(r: ToolResult): string {
  const text = r.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
  return text.length > 512 ? `${text.slice(0, 512)}…` : text;
}

/** The override a skill with `permissions.approval_required` puts on its calls (narrows, never widens). */
function skillApprovalPolicy(skill: string | undefined): NamedPolicy {
  const id = `skill-${skill ?? 'unknown'}-approval-required`;
  return { name: id, spec: { rules: [{ id, action: 'require-approval', scope: 'all', reason: `skill ${skill} requires approval (permissions.approval_required)` }] } as any };
}

/** A ref the loader already checked (sandbox_ref, policy_ref). */
function declared(m: ResolvedManifest, kind: 'Sandbox' | 'Policy', ref: string | undefined): ResolvedPrimitive | undefined {
  if (!ref) return undefined;
  const r = resolveRef(m, kind, ref);
  return r.ok ? r.primitive : undefined;
}

/** A context.sandbox / context.policy override must name a declared primitive (spec §9.3.2). */
function lookup(m: ResolvedManifest, kind: 'Sandbox' | 'Policy', ref: string): ResolvedPrimitive {
  const r = resolveRef(m, kind, ref);
  if (r.ok) return r.primitive;
  throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: context.${kind.toLowerCase()} "${ref}": ${r.reason}`, { [kind.toLowerCase()]: ref });
}
