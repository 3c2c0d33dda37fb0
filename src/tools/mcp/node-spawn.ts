// Plain node:child_process adapter for McpClient's injected spawn. No sandboxing: the runtime
// injects its sandboxed spawner instead; this one is for tests and unsandboxed setups.
//
// The server becomes the leader of a new process group (detached: true → setsid), so kill()
// reaches everything it started: SIGKILL to the group, then we wait for the leader to exit.
// A grandchild that calls setsid itself escapes the group; containing that is the sandbox's job.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import type { McpProcess, McpSpawn } from './client.ts';

/** How long kill() waits for the group to be gone after SIGKILL before giving up waiting. */
const KILL_WAIT_MS = 5000;
const POLL_MS = 10;

export const nodeMcpSpawn: McpSpawn = (bin, argv, env, cwd) =>
  new Promise<McpProcess>((resolve, reject) => {
    const child = spawn(bin, argv, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true, windowsHide: true });
    let exitStatus: { code: number | null; signal: string | null } | undefined;
    const exited = new Promise<{ code: number | null; signal: string | null }>((res) => {
      child.once('exit', (code, signal) => {
        exitStatus = { code, signal };
        res(exitStatus);
      });
    });
    child.once('error', (err) => {
      if (child.pid === undefined) reject(err);
    });
    child.once('spawn', () => {
      const pid = child.pid!;
      /** SIGKILL the group; false once the group is empty (ESRCH). */
      const killGroup = (): boolean => {
        try {
          process.kill(-pid, 'SIGKILL');
          return true;
        } catch {
          // ESRCH: the group is empty. Fall back to the leader alone (in case it left its group).
          if (!exitStatus) child.kill('SIGKILL');
          return false;
        }
      };
      resolve({
        stdin: child.stdin!,
        stdout: child.stdout!,
        stderr: child.stderr!,
        pid,
        exited,
        async kill() {
          // SIGKILL is not instantaneous for every member: keep signalling (which also catches a
          // child forked during the first kill) until the group is empty, bounded. Members that
          // are already zombies still count until their parent (or init) reaps them.
          // Monotonic: a wall-clock jump (docs/boards.md "Clock") must neither cut the wait short nor stretch it.
          const deadline = performance.now() + KILL_WAIT_MS;
          while (killGroup() && groupMayRun(pid) && performance.now() < deadline) await new Promise((r) => setTimeout(r, POLL_MS));
          if (exitStatus) return;
          let timer: ReturnType<typeof setTimeout> | undefined;
          await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, Math.max(0, deadline - performance.now()))))]);
          clearTimeout(timer);
        },
      });
    });
  });

/**
 * Whether a process of group `pgid` may still be running. Linux: a /proc scan, where zombies
 * (dead, waiting for their parent or init to reap them) do not count. Elsewhere: true, so the
 * caller keeps polling until kill(-pgid) reports the group empty.
 */
function groupMayRun(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true;
  }
  for (const d of entries) {
    if (d.charCodeAt(0) < 48 || d.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${d}/stat`, 'latin1');
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3);
    if (Number(f[2]) === pgid && f[0] !== 'Z' && f[0] !== 'X') return true;
  }
  return false;
}

/** Variables a server usually needs to run at all (the MCP SDK passes the same set by default). */
const INHERITED = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'TMPDIR'];

/** A minimal environment for MCP servers from the host's (`from`): the few basics above, nothing else (no secrets). */
export function minimalMcpEnv(from: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of INHERITED) {
    const v = from[k];
    if (typeof v === 'string' && !v.startsWith('()')) env[k] = v;
  }
  return env;
}
