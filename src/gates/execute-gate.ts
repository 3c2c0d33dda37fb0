// Gate 6b: execution under the tool's timeout (spec §5.4: exceeding timeout_ms MUST terminate the
// execution and return -32014; runtime profile §10: SIGTERM, grace, SIGKILL — done by the sandbox
// runner when the signal aborts), then output limits and secret scanning (spec §5.9).
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { applySecretScanningToResult } from '../policy/secret-scan.ts';
import { SandboxViolation, type ToolResult, type ToolRunContext } from '../tools/types.ts';
import { policyDenied, sandboxDenied } from './errors.ts';
import type { GateDeps, ToolCall } from './call.ts';
import type { SandboxSpec } from '../manifest/schema/index.ts';

const NO_LIMITS: NonNullable<ToolCall['sandbox']['resource_limits']> = {};

/** The smaller of two positive limits; a missing or non-positive one does not count. */
function minLimit(a: number | undefined, b: number | undefined): number | undefined {
  const okA = typeof a === 'number' && a > 0;
  const okB = typeof b === 'number' && b > 0;
  return okA && okB ? Math.min(a, b) : okA ? a : okB ? b : undefined;
}

/**
 * The run context a tool sees. `signal` is created on first read (a tool that never reads it costs
 * no AbortController); one created after an abort is born aborted with the same reason.
 */
class RunContext implements ToolRunContext {
  private ac: AbortController | undefined;
  private aborted: { reason: unknown } | undefined;
  constructor(
    readonly requestId: string,
    readonly sandbox: SandboxSpec,
    readonly timeoutMs: number | undefined,
  ) {}
  get signal(): AbortSignal {
    if (!this.ac) {
      this.ac = new AbortController();
      if (this.aborted) this.ac.abort(this.aborted.reason);
    }
    return this.ac.signal;
  }
  abort(reason: unknown): void {
    this.aborted ??= { reason };
    this.ac?.abort(reason);
  }
}

/**
 * Runs the tool under its timeout and the session's cancellation, with a hard stop for a tool that
 * ignores the abort; then the output checks. A refusal is a rejection with its ProtocolError.
 */
export async function executeGate(call: ToolCall, deps: GateDeps, redactText: (s: string) => string, redactValue: (v: unknown) => unknown): Promise<ToolResult> {
  const limits = call.sandbox.resource_limits ?? NO_LIMITS;
  const timeoutMs = minLimit(call.tool.timeoutMs, limits.timeout_ms);
  const ctx = new RunContext(call.requestId, call.sandbox, timeoutMs);
  let pending: Promise<ToolResult>;
  try {
    pending = call.tool.impl.run(call.args, ctx);
  } catch (err) {
    // A run() that throws before it returns its promise fails like one that rejects.
    pending = Promise.reject(err);
  }
  return new Promise<ToolResult>((resolve, reject) => {
    const timers: { cancel(): void }[] = [];
    let settled = false;
    let timedOut = false;
    const finish = (outcome: () => ToolResult) => {
      if (settled) return;
      settled = true;
      for (const t of timers) t.cancel();
      call.signal.removeEventListener('abort', onSession);
      try {
        resolve(outputChecks(call, deps, capOutput(outcome(), limits.max_output_bytes), redactText, redactValue));
      } catch (err) {
        reject(err);
      }
    };
    // A tool that ignores the abort must not hold the call (and the shutdown) forever.
    const hardStop = () =>
      finish(() => {
        if (timedOut) throw timeoutError(call.tool.name, timeoutMs!);
        return failed(call, deps, new Error('did not stop after the session was cancelled'), false, timeoutMs);
      });
    const onSession = () => {
      ctx.abort(call.signal.reason);
      timers.push(deps.clock.setTimeout(hardStop, deps.killGraceMs + 1000));
    };
    call.signal.addEventListener('abort', onSession, { once: true });
    if (timeoutMs !== undefined) {
      timers.push(
        deps.clock.setTimeout(() => {
          timedOut = true;
          ctx.abort(new Error('timeout'));
          // The implementation kills its processes on abort; we wait for that, but not forever.
          timers.push(deps.clock.setTimeout(hardStop, deps.killGraceMs + 1000));
        }, timeoutMs),
      );
    }
    // If the hard stop answers first, the tool's own late outcome is ignored (and never unhandled).
    pending.then(
      (r) => finish(() => succeeded(call, r, timedOut, timeoutMs)),
      (err) => finish(() => failed(call, deps, err, timedOut, timeoutMs)),
    );
  });
}

/** The tool's result: a kill by the timeout or by the session's end is not one. */
function succeeded(call: ToolCall, r: ToolResult, timedOut: boolean, timeoutMs: number | undefined): ToolResult {
  if (timedOut) throw timeoutError(call.tool.name, timeoutMs!);
  // A runner reports a kill as an ordinary (failed) result; a kill by the session's end is not one.
  if (call.signal.aborted) throw stoppingError(call.tool.name);
  return r;
}

/** The tool's failure → a protocol error (thrown) or an isError result. */
function failed(call: ToolCall, deps: GateDeps, err: unknown, timedOut: boolean, timeoutMs: number | undefined): ToolResult {
  const tool = call.tool.name;
  if (err instanceof ProtocolError) throw err;
  if (timedOut) throw timeoutError(tool, timeoutMs!);
  if (call.signal.aborted) throw stoppingError(tool);
  if (err instanceof SandboxViolation) throw sandboxDenied(tool, err.rule, err.detail);
  // A tool that failed to run is a tool result with isError (MCP convention), not a protocol error.
  deps.log.warn('tool failed', { tool, request_id: call.requestId, error: err instanceof Error ? err.message : String(err) });
  return { content: [{ type: 'text', text: `${tool} failed: ${err instanceof Error ? err.message : String(err)}` }], isError: true };
}

/** Work cut off by the end of the session (claw.shutdown's deadline, a signal): docs/protocol.md. */
export function stoppingError(tool: string): ProtocolError {
  return new ProtocolError(ErrorCode.InvalidRequest, `Invalid request: ${tool} was cancelled because the agent is stopping`, { state: 'STOPPING', tool });
}

function timeoutError(tool: string, timeoutMs: number): ProtocolError {
  return new ProtocolError(ErrorCode.ToolTimeout, `Tool execution timeout: ${tool} exceeded ${timeoutMs} ms`, { tool, timeout_ms: timeoutMs });
}

/**
 * resource_limits.max_output_bytes over the whole result (the runner caps a child's stdout itself):
 * text is cut at a UTF-8 boundary; an image or resource block that does not fit is dropped whole.
 */
function capOutput(r: ToolResult, max: number | undefined): ToolResult {
  if (!max) return r;
  const enc = new TextEncoder();
  let budget = max;
  let truncated = false;
  const content = r.content.flatMap((b): ToolResult['content'] => {
    if (b.type !== 'text') {
      const size = enc.encode(JSON.stringify(b)).length;
      if (size <= budget) {
        budget -= size;
        return [b];
      }
      truncated = true;
      budget = 0;
      return [];
    }
    const bytes = enc.encode(b.text);
    if (bytes.length <= budget) {
      budget -= bytes.length;
      return [b];
    }
    truncated = true;
    const text = new TextDecoder().decode(bytes.subarray(0, budget)).replace(/\uFFFD$/, '');
    budget = 0;
    return [{ type: 'text' as const, text }];
  });
  if (truncated) content.push({ type: 'text', text: `[output truncated at ${max} bytes by the sandbox's max_output_bytes]` });
  return { ...r, content };
}

function outputChecks(call: ToolCall, deps: GateDeps, r: ToolResult, redactText: (s: string) => string, redactValue: (v: unknown) => unknown): ToolResult {
  let result = r;
  const policies = call.overridePolicy ? [...call.policies, call.overridePolicy] : call.policies;
  for (const p of policies) {
    const ss = p.spec.secret_scanning;
    if (!ss) continue;
    // Text blocks and resource text alike (secret-scan.ts applySecretScanningToResult).
    const s = applySecretScanningToResult(result, ss, deps.knownSecrets());
    if (s.findings.length === 0) continue;
    if (s.action === 'block') throw policyDenied(call.tool.name, 'secret_scanning', 'tool output contains secrets', { policy: p.name });
    if (s.action === 'warn') deps.log.warn('secret in tool output', { tool: call.tool.name, policy: p.name, request_id: call.requestId, kinds: [...new Set(s.findings.map((f) => f.kind))] });
    result = s.result;
  }
  // Whatever the policies say, a secret value this runtime resolved never leaves it (runtime profile §7).
  // A text block that redaction leaves unchanged is kept as it is, and a result none of whose blocks
  // changed is returned as it is (no copy per call).
  let changed = result !== r;
  const content = result.content.map((b) => {
    if (b.type !== 'text') {
      changed = true;
      return redactValue(b) as typeof b;
    }
    const text = redactText(b.text);
    if (text === b.text && onlyTypeAndText(b)) return b;
    changed = true;
    return { type: 'text' as const, text };
  });
  return changed ? { ...r, content } : r;
}

/** A text block with no other keys: the copy outputChecks would make is equal to it. */
function onlyTypeAndText(b: object): boolean {
  let n = 0;
  for (const k in b) if (++n > 2 || (k !== 'type' && k !== 'text')) return false;
  return true;
}
