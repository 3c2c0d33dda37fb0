// One line per sandbox plan: what a tool under it can still do to the host and to the runtime (docs/security.md).
// Logged at STARTING with the plan's notes (src/runtime/tool-deps.ts) and printed per level by `claw doctor`;
// kept out of levels.ts, which every tool call runs, since only those two need the words.
import type { SandboxSpec } from '../manifest/schema/index.ts';
import type { HostCapabilities } from './host.ts';
import type { IsolationPlan } from './levels.ts';
import { fsMode } from './spec-view.ts';

export function unprotected(plan: IsolationPlan, spec: SandboxSpec, host: HostCapabilities, use: 'exec' | 'builtin' = 'exec'): string {
  if (use === 'builtin') return 'in-process builtin does not protect: no limit, kill or namespace applies; only the path check and the network guard (docs/security.md)';
  const gaps: string[] = [];
  const uid = host.root ? 'root (uid 0)' : `uid ${host.uid}`;
  if (!plan.bwrap) {
    gaps.push(
      `the tool runs as ${uid} in the runtime's namespaces: it reads and writes every file the runtime can (the secrets directory, data_dir, claw.runtime.yaml included), sees and signals the runtime's processes and can read their memory where ptrace is allowed`,
    );
    const env = host.environ;
    gaps.push(
      !env ? "the runtime's /proc/<pid>/environ was not checked" : env.exposed.length > 0 ? `the runtime's /proc/<pid>/environ still shows ${env.exposed.join(', ')}` : "the runtime's /proc/<pid>/environ is wiped of secrets (only PATH, HOME, LANG and the like)",
    );
  } else {
    const fm = fsMode(spec);
    if (fm === 'full') gaps.push(`filesystem full: every host file the uid can reach, writable, except the runtime's own (hidden)`);
    else if (fm === 'read-only') gaps.push(`filesystem read-only: every host file the uid can read, except the runtime's own (hidden)`);
    gaps.push(`the tool runs as ${uid}${host.root ? ' without capabilities' : ''} on the shared kernel (no seccomp filter)`);
  }
  if (plan.network === 'allow-all') gaps.push('network: any address, loopback, private and metadata included (no SSRF guard on child processes)');
  if (!plan.pids) gaps.push('no fork bound');
  if (!plan.memory) gaps.push('no memory bound');
  return `level ${plan.level}${plan.bwrap ? ' + bubblewrap' : ''} does not protect: ${gaps.join('; ')}`;
}

