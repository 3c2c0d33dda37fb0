// Long-running sandboxed process (a stdio MCP server, spec §5.4 "Proxy tools/call through the
// declared sandbox"): same isolation as runSandboxed, but the caller owns the streams and there is
// no output cap or run timeout (per-call timeouts belong to the MCP client). kill() stops it with
// SIGTERM → grace → SIGKILL and resolves when nothing of it is left.
import type { Readable, Writable } from 'node:stream';
import { ClawError } from '../protocol/errors.ts';
import { sweep, terminate, type KillTarget } from './kill.ts';
import { launch, normaliseStatus, type LaunchOptions } from './launch.ts';
import { DEFAULT_GRACE_MS } from './spec-view.ts';

export interface SpawnOptions extends Omit<LaunchOptions, 'timeoutMs'> {
  /** Aborting it kills the process (shutdown). */
  signal?: AbortSignal;
  graceMs?: number;
}

export interface SandboxedProcess {
  pid: number;
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** Resolves once the process has exited and everything it started is gone and cleaned up. */
  exited: Promise<{ exitCode: number | null; signal: string | null }>;
  kill(): Promise<void>;
  notes: string[];
}

export async function spawnSandboxed(opts: SpawnOptions): Promise<SandboxedProcess> {
  if (opts.signal?.aborted) throw new ClawError('sandbox-aborted', `not starting ${opts.bin}: already aborted`);
  const launched = await launch(opts);
  if ('notFound' in launched) throw new ClawError('sandbox-bin-not-found', `${launched.notFound}: command not found`);
  const { child, plan, cgroup, spawned, cleanup } = launched;
  const target: KillTarget = { pid: child.pid ?? 0, bwrap: plan.bwrap, cgroup, exited: false };
  let stopping: Promise<void> | undefined;

  const status = new Promise<{ exitCode: number | null; signal: string | null }>((resolve, reject) => {
    child.once('error', (e) => reject(new ClawError('sandbox-spawn', `could not start ${opts.bin}: ${e.message}`, { cause: e })));
    child.once('exit', (exitCode, signal) => {
      target.exited = true;
      resolve({ exitCode, signal });
    });
  });
  const exited = status
    .then(async (s) => {
      if (stopping) await stopping;
      await sweep(target);
      return normaliseStatus(plan.bwrap, !!stopping, s.exitCode, s.signal);
    })
    .finally(() => {
      opts.signal?.removeEventListener('abort', onAbort);
      return cleanup();
    });
  const kill = async () => {
    stopping ??= terminate(target, opts.graceMs ?? DEFAULT_GRACE_MS);
    await stopping;
    await exited.catch(() => undefined);
  };
  const onAbort = () => void kill();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) onAbort();
  exited.catch(() => undefined); // a spawn failure is reported by the throw below
  // Wait for the spawn to succeed or fail, so a missing launcher is an error here, not later.
  try {
    await spawned;
  } catch (e) {
    await exited.catch(() => undefined);
    throw new ClawError('sandbox-spawn', `could not start ${opts.bin}: ${(e as Error).message}`, { cause: e });
  }
  child.stdin!.on('error', () => undefined);
  return { pid: child.pid!, stdin: child.stdin!, stdout: child.stdout!, stderr: child.stderr!, exited, kill, notes: plan.notes };
}
