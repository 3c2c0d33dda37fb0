// One session's tools (spec §11): what STARTING bound and decided once per tool, the gates' dependencies,
// the idempotency window, the audit log and telemetry. Created by the tools module at start() and closed
// at stop(); every call of that session goes through it, by one async gate path (src/gates/pipeline.ts).
import { setMaxListeners } from 'node:events';
import * as v from 'valibot';
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { issuesData } from '../protocol/wire.ts';
import { toolCallParams, type ToolCallParams } from '../protocol/wire-tools.ts';
import { canonicalJson } from '../protocol/canonical-json.ts';
import type { ApprovalBroker } from '../kernel/approvals.ts';
import { DedupCache, DEFAULT_DEDUP_WINDOW_MS } from '../kernel/idempotency.ts';
import type { TokenLedger } from '../kernel/ledger.ts';
import type { RateLimiter } from '../policy/rate-limit.ts';
import { composeForCall } from '../policy/evaluate.ts';
import { resolveRef } from '../manifest/refs.ts';
import { narrowSandbox } from '../gates/narrow-sandbox.ts';
import { runGates, type PipelineDeps } from '../gates/pipeline.ts';
import { bindTools, type RegisteredTool } from '../tools/registry.ts';
import type { ToolEnvironment } from './tool-deps.ts';
import { DEFAULT_GRACE_MS } from '../sandbox/spec-view.ts';
import { drainRunDirs } from '../sandbox/run-dirs.ts';
import { sandboxOf } from './sandbox-of.ts';
import { restrictedShellWarning } from '../sandbox/shell-rules.ts';
import { timed } from './timed.ts';
import type { Session } from '../kernel/agent.ts';
import { NO_TELEMETRY, type TelemetrySink } from '../kernel/ports.ts';
import type { SandboxSpec } from '../manifest/schema/index.ts';
import type { ResolvedManifest, ResolvedPrimitive } from '../manifest/resolved.ts';
import type { NamedPolicy, ToolCall } from '../gates/call.ts';
import type { ToolImpl, ToolResult } from '../tools/types.ts';
import type { AuditSession } from '../audit/session.ts';
import type { CallOrigin } from '../audit/gate-audit.ts';
import type { AgentTools, AgentToolInfo } from '../agent/service.ts';
import type { CompositeBinder } from '../agent/composite.ts';
import type { ToolsModuleDeps } from './tools-module.ts';
import { eitherSignal } from '../kernel/either-signal.ts';

/** What lives as long as the tools module, across sessions. */
export interface ToolsShared {
  d: ToolsModuleDeps;
  approvals: ApprovalBroker;
  ledger: TokenLedger;
  rateLimiter: RateLimiter;
}

export interface ToolSession {
  /** claw.tool.call (spec §9.3.2): params checked, then the one gate path. */
  call(params: unknown): Promise<ToolResult>;
  /** The bound tools and the same gate path, for the agent loop and composite tools. */
  agentTools: AgentTools;
  audit: AuditSession | undefined;
  /** STOPPING: tool implementations, MCP servers, the audit log. */
  close(): Promise<void>;
}

interface PreparedTool {
  reg: RegisteredTool;
  /** The tool's sandbox (sandbox_ref or the manifest's), before any context.sandbox narrowing. */
  sandbox: SandboxSpec;
  /** Governing policies in evaluation order (the tool's policy_ref first), or why there are none. */
  policies: NamedPolicy[] | Error;
}

/** What STARTING binds and checks; throws (the agent moves to ERROR) when a tool cannot be served. */
export async function openToolSession(shared: ToolsShared, s: Session, telemetry: TelemetrySink): Promise<ToolSession> {
  const { d } = shared;
  const m = s.manifest;
  const audit = d.openAudit?.(m);
  const { env, tools, prepared, composites, deps } = await bindSession(shared, s, audit).catch(async (e) => {
    await audit?.close();
    throw e;
  });
  const dedup = new DedupCache<ToolCallParams>(d.clock, d.config.idempotency?.window_ms ?? DEFAULT_DEDUP_WINDOW_MS, d.dedupStore, callFingerprint);

  /**
   * The one gate path: claw.tool.call from an operator, a tool_call from the agent loop and a composite
   * tool's sub-call all come here. With audit on, the auditor wraps the same call object the gates see
   * (docs/audit.md "Wiring").
   */
  const execute = async (call: ToolCall, check: RegisteredTool['check'], origin: CallOrigin): Promise<ToolResult> => {
    const go = () => runGates(call, check, deps);
    const run = audit ? () => audit.auditor.run(call, origin, go) : go;
    if (telemetry === NO_TELEMETRY) return run();
    // §5.11 tool_calls: name, duration, status, error code (arguments and result subject to `redaction`).
    return timed(d.clock, run, (duration_ms, result, err) => {
      telemetry.latency(`tool:${call.tool.name}`, duration_ms);
      telemetry.emit('tool_calls', 'tool.call', {
        tool: call.tool.name,
        request_id: call.requestId,
        origin,
        duration_ms,
        status: err ? 'error' : result?.isError ? 'tool_error' : 'ok',
        ...(err instanceof ProtocolError ? { code: err.code } : {}),
        arguments: call.args,
        ...(result ? { result: resultText(result) } : {}),
      });
    });
  };

  const agentTools: AgentTools = {
    list: () =>
      [...prepared.values()].map((t): AgentToolInfo => ({ name: t.reg.bound.name, description: t.reg.bound.description, input_schema: t.reg.bound.inputSchema, check: t.reg.check })),
    async call(name, args, o) {
      const t = prepared.get(name);
      if (!t) return { ok: false, code: ErrorCode.InvalidParams, message: `Invalid params: unknown tool "${name}"` };
      const stop = eitherSignal(sessionSignal(s), o.signal);
      try {
        if (t.policies instanceof Error) throw t.policies;
        const result = await execute(
          {
            tool: t.reg.bound,
            args,
            requestId: o.requestId,
            identity: m.identity.name,
            skill: o.skill,
            policies: t.policies,
            // §5.5 permissions.approval_required: a stricter-only override, like context.policy.
            overridePolicy: o.requireApproval ? skillApprovalPolicy(o.skill) : undefined,
            sandbox: o.narrow ? narrowSandbox(t.sandbox, o.narrow) : t.sandbox,
            signal: stop.signal,
          },
          t.reg.check,
          'agent',
        );
        return { ok: true, result };
      } catch (e) {
        if (e instanceof ProtocolError) return { ok: false, code: e.code, message: e.message, data: e.data };
        throw e;
      } finally {
        stop.dispose();
      }
    },
  };
  // Composite tools call back into the gate path above (docs/agent.md "Composite tools").
  composites?.attach({ tools: agentTools, telemetry, recordVerdict: audit ? (raw, verdict, c) => audit.recordVerdict(raw, verdict, c) : undefined });

  const session: ToolSession = {
    agentTools,
    audit,
    call(params) {
      // A retry after a restart must find its first outcome in the memory database, which opens on first need.
      const opening = d.dedupReady?.();
      if (opening) return opening.then(() => session.call(params));
      const r = v.safeParse(toolCallParams, params);
      if (!r.success) throw new ProtocolError(ErrorCode.InvalidParams, 'Invalid params for claw.tool.call', issuesData(r.issues));
      const p = r.output;
      const { name, arguments: args, context } = p;
      const t = prepared.get(name);
      if (!t) throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: unknown tool "${name}"`, { tool: name, available: [...tools.keys()] });
      if (context.identity !== m.identity.name) {
        throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: context.identity "${context.identity}" is not this agent (${m.identity.name})`, {
          identity: context.identity,
        });
      }
      const sandbox = context.sandbox ? narrowSandbox(t.sandbox, lookup(m, 'Sandbox', context.sandbox).spec as SandboxSpec) : t.sandbox;
      const policies = t.policies;
      if (policies instanceof Error) throw policies;
      const override = context.policy ? lookup(m, 'Policy', context.policy) : undefined;
      // The params are the fingerprint's source: made canonical only when the request_id repeats.
      const outcome = dedup.run(context.request_id, p, () =>
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
            signal: sessionSignal(s),
          },
          t.reg.check,
          'operator',
        ),
      );
      if ('conflict' in outcome) {
        throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: request_id "${context.request_id}" was already used for a different call`, {
          request_id: context.request_id,
        });
      }
      if (outcome.reused) d.log.info('duplicate request_id: answering with the first result', { request_id: context.request_id, tool: name });
      return Promise.resolve(outcome.outcome);
    },
    async close() {
      prepared.clear(); // an agent loop still holding agentTools finds no tool
      composites?.detach();
      // The file closes synchronously; awaiting lets an audit mirror (sqlite, webhook) flush, bounded by its own timeout.
      await audit?.close();
      await Promise.all([...tools.values()].map((t) => t.bound.impl.close?.().catch(() => {})));
      await env?.registry.mcp?.close().catch(() => {});
      drainRunDirs(); // the empty run directories kept for reuse (sandbox/run-dirs.ts)
    },
  };
  return session;
}

interface BoundSession {
  env?: ToolEnvironment;
  tools: Map<string, RegisteredTool>;
  prepared: Map<string, PreparedTool>;
  composites?: CompositeBinder;
  deps: PipelineDeps;
}

/**
 * Binds the manifest's tools and refuses, now, a level or feature this board cannot provide (never
 * silently downgraded); then decides per tool what only the manifest decides (sandbox, policies).
 * Below Level 2 the tool methods answer -32601 (spec §11): nothing to bind or check.
 */
async function bindSession(shared: ToolsShared, s: Session, audit: AuditSession | undefined): Promise<BoundSession> {
  const { d } = shared;
  const m = s.manifest;
  const observe = audit?.auditor.observe;
  if (s.level < 2) return { tools: new Map(), prepared: new Map(), deps: { ...pipelineDeps(shared, m, () => undefined), observe } };
  const env = await d.environment(m);
  const deps: PipelineDeps = { ...pipelineDeps(shared, m, (sb, impl) => env.isolationProblem(sb, impl)), observe };
  const composites = m.tools.some((t) => t.spec.composite === true) ? d.composites?.(m) : undefined;
  let tools: Map<string, RegisteredTool>;
  try {
    tools = await bindTools(m, d.config, composites ? { ...env.registry, composite: composites } : env.registry);
  } catch (e) {
    throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: ${(e as Error).message}`, { state: 'ERROR' });
  }
  const refusals = new Set<string>();
  const sandboxes = new Map<string, SandboxSpec>();
  for (const [name, t] of tools) {
    const sb = sandboxOf(m, t.bound.sandboxRef);
    sandboxes.set(name, sb);
    // Through the session's cache: the first call of each tool reuses this answer.
    const why = deps.isolationProblem(sb, t.bound.impl);
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
  const manifestPolicies = m.policies.map((x) => ({ name: x.name, spec: x.spec as any }));
  const prepared = new Map<string, PreparedTool>();
  for (const [name, reg] of tools) {
    const policyRef = reg.bound.policyRef ? declared(m, 'Policy', reg.bound.policyRef)?.name : undefined;
    let policies: NamedPolicy[] | Error;
    try {
      policies = composeForCall(manifestPolicies, policyRef);
    } catch (e) {
      policies = e as Error; // answered per call (the loader's cross-checks should make this unreachable)
    }
    prepared.set(name, { reg, sandbox: sandboxes.get(name)!, policies });
  }
  d.log.info('tools bound', { tools: [...tools.values()].map((t) => `${t.bound.name}:${t.bound.impl.kind}`) });
  return { env, tools, prepared, composites, deps };
}

/** The gates' dependencies for one session. The board's isolation answer is asked once per (sandbox, tool). */
function pipelineDeps(shared: ToolsShared, m: ResolvedManifest, ask: PipelineDeps['isolationProblem']): PipelineDeps {
  const { d } = shared;
  const isolation = new WeakMap<SandboxSpec, Map<ToolImpl, string | undefined>>();
  return {
    identity: m.identity,
    chargedProvider: m.providers[0],
    approvals: shared.approvals,
    announce: d.notify,
    ledger: shared.ledger,
    rateLimiter: shared.rateLimiter,
    clock: d.clock,
    log: d.log,
    knownSecrets: () => d.redactor.known(),
    defaultApprovalTimeoutMs: (d.config.approvals?.default_timeout_seconds ?? 300) * 1000,
    killGraceMs: d.config.sandbox?.kill_grace_ms ?? DEFAULT_GRACE_MS,
    // A narrowed sandbox is a new object, asked anew.
    isolationProblem(sb, impl) {
      let bySandbox = isolation.get(sb);
      if (!bySandbox) isolation.set(sb, (bySandbox = new Map()));
      if (!bySandbox.has(impl)) bySandbox.set(impl, ask(sb, impl));
      return bySandbox.get(impl);
    },
    redactValue: (x) => d.redactor.redactValue(x),
    redactText: (t) => d.redactor.redact(t),
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

/**
 * The session's abort signal for a tool call. Each call in flight holds one abort listener on it (the execute gate
 * removes it when the call ends), so a dozen concurrent calls are normal use, not a leak: Node's warning at 11
 * listeners would only be noise on the operator's stderr.
 */
function sessionSignal(s: Session): AbortSignal {
  const signal = s.abort.signal;
  setMaxListeners(0, signal);
  return signal;
}
