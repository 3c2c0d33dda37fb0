// Gate 3: policy (spec §5.9). Input checks the policies declare (input_validation, prompt_injection,
// secret_scanning of inputs), then the rules: concatenated, first match wins, no match → deny; a
// context.policy override is evaluated too and the stricter decision wins; rate limits last.
import { evaluatePolicy, type Decision, type PolicyCall } from '../policy/evaluate.ts';
import { narrowDecisions } from '../policy/narrow.ts';
import { validateInput } from '../policy/input-validation.ts';
import { detectInjection } from '../policy/prompt-injection.ts';
import { applySecretScanningToArgs } from '../policy/secret-scan.ts';
import { policyDenied } from './errors.ts';
import type { GateDeps, GateState, NamedPolicy, ToolCall } from './call.ts';

const DEFAULT_APPROVAL_TIMEOUT_S = 300;

export function policyGate(call: ToolCall, deps: GateDeps, state: GateState): void {
  const tool = call.tool.name;
  const all: NamedPolicy[] = call.overridePolicy ? [...call.policies, call.overridePolicy] : call.policies;
  for (const p of all) if (p.spec.input_validation || p.spec.prompt_injection || p.spec.secret_scanning) inputChecks(call, p, deps);

  const pc: PolicyCall = { tool, category: call.tool.category, annotations: call.tool.annotations, skill: call.skill, args: call.args };
  let decision: Decision = evaluatePolicy(call.policies, pc);
  if (call.overridePolicy) decision = narrowDecisions(decision, evaluatePolicy([call.overridePolicy], pc));

  if (decision.action === 'deny') {
    const r = decision.rule;
    throw policyDenied(tool, r?.id ?? 'default-deny', r?.reason ?? (decision.implicit ? `no policy rule allows ${tool} (implicit default deny, spec §5.9)` : undefined), r ? { policy: r.policy } : undefined);
  }
  // rate_limits.tool_calls_per_minute of every governing policy (only calls that would run count).
  for (const p of all) {
    const limit = p.spec.rate_limits?.tool_calls_per_minute;
    // Monotonic time: a wall-clock jump (NTP at boot on a board without an RTC) must not reset the window.
    if (limit !== undefined && !deps.rateLimiter.tryAcquire(p.name, limit, deps.clock.monotonic())) {
      throw policyDenied(tool, 'rate_limits.tool_calls_per_minute', `policy ${p.name} allows ${limit} tool calls per minute`, { policy: p.name, limit });
    }
  }
  if (decision.action === 'require-approval') {
    const r = decision.rule!;
    state.approval = {
      by: r.id,
      reason: r.reason,
      timeoutMs: (r.approval?.timeout_seconds ?? DEFAULT_APPROVAL_TIMEOUT_S) * 1000,
      defaultIfTimeout: r.approval?.default_if_timeout ?? 'deny',
    };
  } else if (decision.action === 'audit-only') {
    state.audit = { ruleId: decision.rule!.id, policy: decision.rule!.policy };
  }
}

function inputChecks(call: ToolCall, p: NamedPolicy, deps: GateDeps): void {
  const tool = call.tool.name;
  const bad = validateInput(call.args, p.spec.input_validation);
  if (bad) throw policyDenied(tool, bad.rule, bad.message, { policy: p.name });

  const inj = detectInjection(call.args, p.spec.prompt_injection);
  if (inj.matched.length > 0) {
    const where = inj.matched.map((m) => m.path);
    if (inj.action === 'block-and-log') {
      deps.log.warn('prompt injection blocked', { tool, policy: p.name, request_id: call.requestId, paths: where });
      throw policyDenied(tool, 'prompt_injection', `tool input looks like a prompt injection (${where.join(', ')})`, { policy: p.name });
    }
    const level = inj.action === 'warn' ? 'warn' : 'info';
    deps.log[level]('prompt injection pattern in tool input', { tool, policy: p.name, request_id: call.requestId, paths: where });
  }

  // Every string of the arguments on its own (keys included), as secret-scan.ts documents it.
  const ss = p.spec.secret_scanning;
  if (ss) {
    const scan = applySecretScanningToArgs(call.args, ss, deps.knownSecrets());
    if (scan.findings.length > 0) {
      const kinds = [...new Set(scan.findings.map((f) => f.kind))];
      if (scan.action === 'block') throw policyDenied(tool, 'secret_scanning', `tool input contains secrets (${kinds.join(', ')})`, { policy: p.name });
      deps.log.warn('secret in tool input', { tool, policy: p.name, request_id: call.requestId, kinds });
    }
  }
}
