// Reading /proc/<pid>/stat (proc(5)): the fields the kill paths need. `start` (field 22, clock ticks
// since boot) identifies a process across pid reuse: a pid number can be handed out again once its
// process is reaped, but never with the same start time in the same boot.
// /proc is read synchronously: it is memory-backed, and a scan of a few hundred entries takes well
// under a millisecond that way, against ~10 ms through the promise API.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** Session id: the pid of the session leader (setsid(2) makes a process its own). */
  sid: number;
  /** Start time in clock ticks after boot. */
  start: number;
  zombie: boolean;
}

/** "pid (comm) S ppid pgrp session tty tpgid flags … starttime …": comm may hold spaces and ')'. */
export function parseProcStat(text: string): ProcInfo | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const f = text.slice(close + 2).split(' ');
  // f[0] is field 3 (state): field n sits at f[n - 3].
  const info = { pid: Number(text.slice(0, text.indexOf(' '))), zombie: f[0] === 'Z' || f[0] === 'X', ppid: Number(f[1]), pgid: Number(f[2]), sid: Number(f[3]), start: Number(f[19]) };
  return Number.isInteger(info.pid) && Number.isInteger(info.start) ? info : undefined;
}

export function readProc(pid: number | 'self'): ProcInfo | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Every process visible in /proc, zombies included (callers decide). */
export function readProcTable(): ProcInfo[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: ProcInfo[] = [];
  for (const n of names) {
    if (n.charCodeAt(0) < 48 || n.charCodeAt(0) > 57) continue;
    const p = readProc(Number(n));
    if (p) out.push(p);
  }
  return out;
}
