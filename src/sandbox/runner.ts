// The process runner every non-builtin tool (and every OS-touching builtin) goes through (spec §5.8
// level `process`; §5.4 timeout → terminate; runtime profile §10 SIGTERM → grace → SIGKILL).
// No shell is involved: `bin` is executed with `argv` as given, so `;`, `$(...)` and backticks in an
// argument are plain characters.
import { ClawError } from '../protocol/errors.ts';
import { sweep, terminate, type KillTarget } from './kill.ts';
import { launch, normaliseStatus, type LaunchOptions } from './launch.ts';
import { captureHead, captureTail } from './output.ts';
import { DEFAULT_GRACE_MS, DEFAULT_MAX_OUTPUT_BYTES, effectiveTimeout, limit } from './spec-view.ts';
import { timerDelay } from '../protocol/delay.ts';

export interface RunOptions extends LaunchOptions {
  stdin?: string | Uint8Array;
  signal?: AbortSignal;
  /** SIGTERM → SIGKILL grace (default 2000 ms, runtime configuration). */
  graceMs?: number;
}

export interface RunResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** What enforced what for this run (levels.ts), for the audit log. */
  notes: string[];
}

/** How long to wait for stdout/stderr to close after the tool is gone (a leaked fd holder). */
const DRAIN_MS = 250;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runSandboxed(opts: RunOptions): Promise<RunResult> {
  const started = performance.now();
  const base = { exitCode: null, signal: null, stdout: '', stderr: '', stdoutTruncated: false, timedOut: false, notes: [] as string[] };
  if (opts.signal?.aborted) return { ...base, aborted: true, durationMs: 0 };
  const launched = await launch(opts);
  if ('notFound' in launched) {
    return { ...base, exitCode: 127, stderr: `claw: ${launched.notFound}: command not found\n`, aborted: false, durationMs: performance.now() - started };
  }
  const { child, plan, cgroup, cleanup } = launched;
  const cap = limit(opts.sandbox, 'max_output_bytes') ?? DEFAULT_MAX_OUTPUT_BYTES;
  const out = captureHead(child.stdout!, cap);
  const err = captureTail(child.stderr!, Math.min(cap, 1024 * 1024));
  const target: KillTarget = { pid: child.pid ?? 0, bwrap: plan.bwrap, cgroup, exited: false };

  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
    child.once('error', reject); // spawn failure (bwrap/prlimit/sh vanished since the probe)
    child.once('exit', (code, signal) => {
      target.exited = true;
      resolve({ code, signal });
    });
  });
  child.stdin!.on('error', () => undefined); // EPIPE when the tool does not read its input
  if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  else child.stdin!.end();

  let timedOut = false;
  let aborted = false;
  // True once the tool exited on its own and nothing of it had to be killed: its run directory may be reused.
  let clean = false;
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= terminate(target, opts.graceMs ?? DEFAULT_GRACE_MS);
  };
  const timeout = effectiveTimeout(opts.sandbox, opts.timeoutMs);
  const timer = timeout !== undefined ? setTimeout(() => ((timedOut = true), stop()), timerDelay(timeout)) : undefined;
  const onAbort = () => {
    aborted = true;
    stop();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) onAbort(); // aborted while we were preparing the launch

  try {
    const status = await exited;
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    // Whatever the tool left behind (background children, setsid daemons we can see) goes now.
    if (stopping) await stopping;
    clean = !(await sweep(target, { cleanExit: !stopping })) && !stopping;
    await Promise.race([Promise.all([out.closed, err.closed]), sleep(DRAIN_MS)]);
    child.stdout!.destroy();
    child.stderr!.destroy();
    const { exitCode, signal } = normaliseStatus(plan.bwrap, !!stopping, status.code, status.signal);
    return {
      exitCode,
      signal,
      stdout: out.text(),
      stderr: err.text(),
      stdoutTruncated: out.truncated(),
      timedOut,
      aborted,
      durationMs: performance.now() - started,
      notes: plan.notes,
    };
  } catch (e) {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    throw new ClawError('sandbox-spawn', `could not start ${opts.bin}: ${(e as Error).message}`, { cause: e });
  } finally {
    await cleanup({ reuseRunDir: clean });
  }
}
