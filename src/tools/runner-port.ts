// How tools start processes: always through the sandbox runner (src/sandbox/runner.ts), injected,
// so a tool implementation never spawns anything the sandbox did not see.
import type { SandboxSpec } from '../manifest/schema/index.ts';
import type { RunResult } from '../sandbox/runner.ts';

export interface RunRequest {
  bin: string;
  argv: string[];
  stdin?: string;
  /** Extra environment (secrets injected per the sandbox's secrets.injection are added by the runner's caller). */
  env?: Record<string, string>;
  cwd?: string;
  sandbox: SandboxSpec;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Secret values for the child, delivered per the sandbox's secrets.injection (spec §5.8). */
  secrets?: Record<string, string>;
  /** Files the child must be able to read even under a strict filesystem scope (e.g. our own bundle). */
  readOnlyBinds?: string[];
}

/** What a run gives back: the sandbox runner's result (exit, output, truncation, timeout, notes). */
export type RunOutcome = RunResult;

export type ProcessRunner = (req: RunRequest) => Promise<RunOutcome>;
