// Which V8 compiler runs sql.js's WebAssembly (docs/memory.md "Memory budget"). V8 compiles every wasm function
// with Liftoff (baseline) on first call, then recompiles hot ones with TurboFan (optimizing) in the background.
// For sql.js that tier-up costs ~200 ms of CPU in the first memory operations and 20–35 MB of peak RSS at 10k
// entries; it makes full-text queries about 2× faster. An agent's memory answers a
// few queries per turn, next to a model that takes seconds, so on a board the memory matters more: the runtime
// keeps sql.js on Liftoff where memory is short (a budget, a cgroup limit or the RAM below 1 GB).
// The flag is set by the boot loader (targets/boot.ts) before any code is compiled, never later: V8 stamps its
// flags into every code cache, so a flag set after start-up would make the next start reject the whole code
// cache and write it again (measured with scripts/bench-flash.mjs: ~1 MB rewritten per start).
export type WasmTier = 'baseline' | 'optimizing';

/** A budget at or above this many MB (configured, or a cgroup limit) lets V8 tier sql.js up. */
export const OPTIMIZING_MIN_BUDGET_MB = 1024;

export interface BudgetFacts {
  /** `CLAW_MEMORY_BUDGET_MB` (read at boot, before the runtime config is). */
  configuredMb?: number;
  /** The process's cgroup memory limit in bytes (undefined: none, or unreadable). */
  cgroupLimitBytes?: number;
  /** Physical memory in bytes (os.totalmem()). */
  physicalBytes?: number;
}

export interface TierChoice {
  tier: WasmTier;
  /** The budget the choice was made from, in MB (undefined when none was given). */
  budgetMb?: number;
  /** Where the budget came from, for the log line. */
  source: 'env' | 'cgroup' | 'physical' | 'none';
}

/**
 * The tier for a memory budget: `CLAW_MEMORY_BUDGET_MB`, else a cgroup limit (systemd `MemoryMax=`, a
 * container's), capped by physical memory; with neither, physical memory itself. Below 1024 MB: baseline.
 * Why not baseline everywhere: setting the flag means loading node:v8 at boot (its stream dependencies cost
 * ~8 ms of CPU before the first reply), worth it only where memory is short.
 */
export function chooseWasmTier(f: BudgetFacts): TierChoice {
  const physicalMb = f.physicalBytes ? Math.floor(f.physicalBytes / 1048576) : undefined;
  const given: [number, TierChoice['source']] | undefined =
    f.configuredMb !== undefined ? [f.configuredMb, 'env'] : f.cgroupLimitBytes !== undefined ? [Math.floor(f.cgroupLimitBytes / 1048576), 'cgroup'] : undefined;
  if (!given) {
    if (physicalMb === undefined) return { tier: 'baseline', source: 'none' };
    return { tier: physicalMb >= OPTIMIZING_MIN_BUDGET_MB ? 'optimizing' : 'baseline', budgetMb: physicalMb, source: 'physical' };
  }
  const budgetMb = physicalMb === undefined ? given[0] : Math.min(given[0], physicalMb);
  return { tier: budgetMb >= OPTIMIZING_MIN_BUDGET_MB ? 'optimizing' : 'baseline', budgetMb, source: given[1] };
}

/** Limits larger than this mean "no limit" (cgroup v1 writes 2^63 rounded down to a page). */
const NO_LIMIT = 2 ** 60;

/**
 * The memory limit of this process's cgroup: the smallest of v2 `memory.max` and v1 `memory.limit_in_bytes`
 * over its own group and every ancestor. The kernel enforces each ancestor's limit on the whole subtree, so a
 * limit set on a slice (systemd `MemoryMax=` on `board.slice`, a parent of `claw.service`) or on a container's
 * group whose processes sit in a child group binds as surely as one on the group itself; reading only the own
 * group missed it and left sql.js tiering up inside a 128 MB limit (measured: peak RSS 117 MB instead of 79 MB
 * after a 10k-entry fill). Walking up also reaches the mount's root, where a container that mounts its own
 * group there still names it by its longer host path in `/proc/self/cgroup`.
 * `read` returns a file's text or undefined (injectable for tests); `/proc/self/cgroup` says where the group is.
 */
export function cgroupMemoryLimit(read: (path: string) => string | undefined): number | undefined {
  const candidates: string[] = [];
  for (const line of (read('/proc/self/cgroup') ?? '').split('\n')) {
    // "<id>:<controllers>:<path>"; the path may itself contain ':'. v2 is the line with no controllers.
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    const v1 = controllers.split(',').includes('memory');
    if (controllers !== '' && !v1) continue;
    const [root, file] = v1 ? ['/sys/fs/cgroup/memory', 'memory.limit_in_bytes'] : ['/sys/fs/cgroup', 'memory.max'];
    const parts = line.slice(second + 1).split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
    for (let n = parts.length; n >= 0; n--) candidates.push([root, ...parts.slice(0, n), file].join('/'));
  }
  let limit: number | undefined;
  for (const file of candidates) {
    const text = read(file)?.trim();
    if (text === undefined || text === '' || text === 'max') continue;
    const n = Number(text);
    if (Number.isFinite(n) && n > 0 && n < NO_LIMIT && (limit === undefined || n < limit)) limit = n;
  }
  return limit;
}

/** `CLAW_MEMORY_BUDGET_MB`: a positive integer, else undefined. */
export function budgetFromEnv(env: Record<string, string | undefined>): number | undefined {
  const raw = env.CLAW_MEMORY_BUDGET_MB;
  if (raw === undefined || !/^[0-9]+$/.test(raw.trim())) return undefined;
  const n = Number(raw);
  return n > 0 ? n : undefined;
}

export interface MachineIo {
  env: Record<string, string | undefined>;
  /** A file's text, or undefined. */
  readText(path: string): string | undefined;
  totalmem(): number;
}

/** The tier for this machine: the same answer wherever it is asked (the boot applies it, memory logs it). */
export function machineWasmTier(io: MachineIo): TierChoice {
  return chooseWasmTier({ configuredMb: budgetFromEnv(io.env), cgroupLimitBytes: cgroupMemoryLimit(io.readText), physicalBytes: io.totalmem() });
}

/** V8 flags for a tier: baseline is `--liftoff-only` (wasm only: JavaScript compiles as ever). */
export function v8FlagsFor(tier: WasmTier): string | undefined {
  return tier === 'baseline' ? '--liftoff-only' : undefined;
}

/** The answer for this process, from its environment, cgroup and RAM (what the boot loader applied); Bun: none. */
export async function hostWasmTier(): Promise<TierChoice | undefined> {
  if ((process.versions as { bun?: string }).bun) return undefined;
  const { readFileSync } = await import('node:fs');
  const { totalmem } = await import('node:os');
  const readText = (path: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  };
  return machineWasmTier({ env: process.env, readText, totalmem });
}
