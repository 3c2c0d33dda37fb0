// Fakes for the gate / tool unit tests: a bound tool around a fake ToolImpl, a ToolCall, the
// PipelineDeps with a manual clock, a capturing logger and announce, an in-memory LedgerStore, a
// fake process runner and a fake network fetch. No timers, no I/O.
import { FakeClock, captureLogger } from './fakes.ts';
import { ApprovalBroker } from '../../../src/kernel/approvals.ts';
import { TokenLedger, type LedgerEntry, type LedgerStore } from '../../../src/kernel/ledger.ts';
import { RateLimiter } from '../../../src/policy/rate-limit.ts';
import { Redactor } from '../../../src/log/redactor.ts';
import type { PipelineDeps } from '../../../src/gates/pipeline.ts';
import type { NamedPolicy, ToolCall } from '../../../src/gates/call.ts';
import type { BoundTool, ToolImpl, ToolResult, ToolRunContext } from '../../../src/tools/types.ts';
import type { ProcessRunner, RunOutcome, RunRequest } from '../../../src/tools/runner-port.ts';
import type { FetchOutcome, NetworkFetch } from '../../../src/tools/builtins/http-fetch.ts';
import type { JsonRpcNotification } from '../../../src/protocol/jsonrpc.ts';
import type { PolicySpec, SandboxSpec } from '../../../src/manifest/schema/index.ts';
import { primitive } from './fakes.ts';

export const ok = (text: string): ToolResult => ({ content: [{ type: 'text', text }] });

/** A ToolImpl whose run is the given function; records every context it was called with. */
export function fakeImpl(run: (args: Record<string, unknown>, ctx: ToolRunContext) => Promise<ToolResult>, extra: Partial<ToolImpl> = {}): ToolImpl & { calls: ToolRunContext[] } {
  const calls: ToolRunContext[] = [];
  return {
    kind: 'builtin',
    touchesOs: false,
    calls,
    run: (args, ctx) => {
      calls.push(ctx);
      return run(args, ctx);
    },
    ...extra,
  };
}

export function boundTool(over: Partial<BoundTool> = {}): BoundTool {
  return {
    name: 't1',
    description: 'a test tool',
    inputSchema: { type: 'object' },
    annotations: {},
    impl: fakeImpl(async () => ok('ran')),
    ...over,
  };
}

export const allowAll: NamedPolicy = { name: 'allow-all', spec: { rules: [{ id: 'allow-everything', action: 'allow', scope: 'all' }] } as PolicySpec };
export const policy = (name: string, spec: Partial<PolicySpec> & { rules: PolicySpec['rules'] }): NamedPolicy => ({ name, spec: spec as PolicySpec });

export function makeCall(over: Partial<ToolCall> = {}): ToolCall {
  return {
    tool: boundTool(),
    args: {},
    requestId: 'req-1',
    identity: 'test-identity',
    policies: [allowAll],
    sandbox: { level: 'none' },
    signal: new AbortController().signal,
    ...over,
  };
}

export class MemLedgerStore implements LedgerStore {
  data = new Map<string, LedgerEntry>();
  saves = 0;
  async load(p: string) {
    const e = this.data.get(p);
    return e ? { ...e } : undefined;
  }
  async save(p: string, e: LedgerEntry) {
    this.saves++;
    this.data.set(p, { ...e });
  }
}

export interface TestDeps extends PipelineDeps {
  clock: FakeClock;
  log: ReturnType<typeof captureLogger>;
  announced: JsonRpcNotification[];
  approvals: ApprovalBroker;
  store: MemLedgerStore;
  redactor: Redactor;
}

export function makeDeps(over: { autonomy?: string; tokensPerDay?: number; secrets?: string[]; isolationProblem?: PipelineDeps['isolationProblem'] } = {}): TestDeps {
  const clock = new FakeClock();
  const log = captureLogger();
  const store = new MemLedgerStore();
  const redactor = new Redactor();
  for (const s of over.secrets ?? []) redactor.add(s);
  const announced: JsonRpcNotification[] = [];
  const approvals = new ApprovalBroker(clock);
  return {
    identity: primitive('Identity', 'test-identity', over.autonomy ? { autonomy: over.autonomy } : { autonomy: 'autonomous' }),
    chargedProvider: primitive('Provider', 'p1', over.tokensPerDay !== undefined ? { limits: { tokens_per_day: over.tokensPerDay } } : {}),
    approvals,
    announce: (n) => announced.push(n),
    announced,
    ledger: new TokenLedger(store, clock),
    store,
    rateLimiter: new RateLimiter(),
    clock,
    log,
    knownSecrets: () => redactor.known(),
    defaultApprovalTimeoutMs: 300_000,
    killGraceMs: 2000,
    isolationProblem: over.isolationProblem ?? (() => undefined),
    redactValue: (v) => redactor.redactValue(v),
    redactText: (s) => redactor.redact(s),
    redactor,
  };
}

/** Settle a promise into { value } or { error } so a test can assert on either. */
export async function settle<T>(p: Promise<T>): Promise<{ value?: T; error?: any }> {
  try {
    return { value: await p };
  } catch (error) {
    return { error };
  }
}

/** The JSON shape of a ProtocolError (what goes on the wire). */
export const wire = (e: any) => (e && typeof e.toJSON === 'function' ? e.toJSON() : { thrown: String(e) });

export function runOutcome(over: Partial<RunOutcome> = {}): RunOutcome {
  return { exitCode: 0, signal: null, stdout: '', stderr: '', stdoutTruncated: false, timedOut: false, aborted: false, durationMs: 1, notes: [], ...over };
}

/** A ProcessRunner that records requests and answers with `reply`. */
export function fakeRunner(reply: (req: RunRequest) => RunOutcome | Promise<RunOutcome> = () => runOutcome()): ProcessRunner & { requests: RunRequest[] } {
  const requests: RunRequest[] = [];
  const fn = (async (req: RunRequest) => {
    requests.push(req);
    return reply(req);
  }) as ProcessRunner & { requests: RunRequest[] };
  fn.requests = requests;
  return fn;
}

export function fakeFetch(reply: Partial<FetchOutcome> = {}): NetworkFetch & { calls: { url: string; init: any; network: any }[] } {
  const calls: { url: string; init: any; network: any }[] = [];
  const fn = (async (url: string, init: any, network: any) => {
    calls.push({ url, init, network });
    return { status: 200, headers: { 'content-type': 'text/plain' }, body: 'hello', truncated: false, finalUrl: url, ...reply };
  }) as NetworkFetch & { calls: { url: string; init: any; network: any }[] };
  fn.calls = calls;
  return fn;
}

export type { SandboxSpec };
