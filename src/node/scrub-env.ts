// Wipes the runtime's initial environment block, the one Linux shows in /proc/<pid>/environ (docs/security.md
// "The runtime's environment"), before the first tool can run: the tool layer calls it when a session binds
// tools (src/runtime/tool-deps.ts), `claw doctor` before it reports, so a start without tools pays nothing. Provider keys and other secret_refs usually arrive as environment variables, and
// any process of the same uid that is not in a pid namespace of its own (an exec tool at level `none`, or at
// `process` without bubblewrap) can read that file. unsetenv() does not help: the kernel reports the memory
// between mm->env_start and env_end, which libc never rewrites; `delete process.env.X` only drops the pointer.
//
// So every variable outside a short list of harmless ones is first re-set through process.env (setenv copies it
// to the heap and points environ at the copy, so the runtime reads exactly what it read before), then its bytes
// in the original block are overwritten with NULs through /proc/self/mem. The values stay in this process's
// memory only; reading that needs ptrace rights over the runtime, which docs/security.md lists per level.
//
// Node only: Bun keeps its own copy of the environment and may point into the block, so it is left alone there.
import { closeSync, openSync, readSync, writeSync } from 'node:fs';

/** Environment variables whose values say nothing secret; every other one is wiped from /proc/<pid>/environ. */
export const HARMLESS_ENV = /^(PATH|HOME|USER|LOGNAME|SHELL|PWD|OLDPWD|SHLVL|TERM|COLORTERM|LANG|LANGUAGE|LC_[A-Z_]+|TZ|TMPDIR|_)$/;

export type ScrubResult = { scrubbed: string[] } | { skipped: string };

let last: ScrubResult | undefined;

export interface ScrubIo {
  env: Record<string, string | undefined>;
  readStat(): string;
  /** This process's memory, read and written at an address (/proc/self/mem). */
  openMem(): { read(addr: number, length: number): Buffer; write(addr: number, data: Buffer): void; close(): void };
}

function procIo(): ScrubIo {
  return {
    env: process.env,
    readStat() {
      // Not readFileSync: a /proc file reports size 0, which costs it an fstat and a growing buffer (~0.7 ms).
      const fd = openSync('/proc/self/stat', 'r');
      try {
        const b = Buffer.allocUnsafe(4096);
        return b.toString('latin1', 0, readSync(fd, b, 0, b.length, 0));
      } finally {
        closeSync(fd);
      }
    },
    openMem() {
      const fd = openSync('/proc/self/mem', 'r+');
      return {
        read(addr, length) {
          const b = Buffer.alloc(length);
          readSync(fd, b, 0, length, addr);
          return b;
        },
        write: (addr, data) => void writeSync(fd, data, 0, data.length, addr),
        close: () => closeSync(fd),
      };
    },
  };
}

/** env_start and env_end: fields 50 and 51 of /proc/self/stat (proc(5)); the name in field 2 may hold spaces. */
export function envBounds(stat: string): [number, number] | undefined {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = Number(rest[50 - 3]);
  const end = Number(rest[51 - 3]);
  return Number.isSafeInteger(start) && Number.isSafeInteger(end) && start > 0 && end > start ? [start, end] : undefined;
}

/** Once per process (later calls return the first answer), unless given an `io` (tests). */
export function scrubInitialEnvironment(io?: ScrubIo): ScrubResult {
  if (io) return scrub(io);
  last ??= scrub();
  return last;
}

function scrub(given?: ScrubIo): ScrubResult {
  if (!given && (process.platform !== 'linux' || process.versions.bun)) return { skipped: `not Node on Linux (${process.platform}${process.versions.bun ? ', Bun' : ''})` };
  let mem: ReturnType<ScrubIo['openMem']> | undefined;
  try {
    const io = given ?? procIo();
    const bounds = envBounds(io.readStat());
    if (!bounds) return { skipped: 'no env_start/env_end in /proc/self/stat' };
    const [start, end] = bounds;
    mem = io.openMem();
    const block = mem.read(start, end - start);
    const scrubbed: string[] = [];
    for (let at = 0; at < block.length; ) {
      let nul = block.indexOf(0, at);
      if (nul === -1) nul = block.length;
      const eq = block.indexOf(0x3d, at); // '='
      const name = eq > at && eq < nul ? block.toString('latin1', at, eq) : '';
      // An entry with no name (no `=`, or a leading one) is no variable: getenv never finds it, but the
      // parent can still have put a secret there, so it is wiped without being re-set.
      if (nul > at && !HARMLESS_ENV.test(name)) {
        // Re-set before wiping: afterwards environ must not point into the wiped bytes.
        if (name && !scrubbed.includes(name)) {
          const value = io.env[name]; // what the runtime reads now (it may have changed it since exec)
          if (value !== undefined) io.env[name] = value;
          scrubbed.push(name);
        }
        block.fill(0, at, nul);
      }
      at = nul + 1;
    }
    if (scrubbed.length > 0) mem.write(start, block);
    return { scrubbed };
  } catch (e) {
    return { skipped: (e as Error).message };
  } finally {
    mem?.close();
  }
}
