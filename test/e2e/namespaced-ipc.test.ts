// Container-to-container IPC on a restricted host (examples/containers, docs/transports.md "Filesystem"):
// two `claw run` processes, each in its own mount, pid, ipc, uts and network namespaces (bubblewrap; no
// network but loopback), sharing nothing writable but one IPC directory. The front agent's `relay` tool
// sends `claw.tool.call count` to the worker through the fs transport; the worker's `count` tool appends the
// job to a file only the worker sees. The worker is SIGKILLed mid-traffic and restarted: every job is
// answered (its result, or "interrupted" for a job the kill cut short), none is executed twice, and resending every job afterwards runs nothing again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAW, ROOT, startClaw, type ClawRun } from './helpers/claw-process.ts';
import { IDENTITY, manifest } from './helpers/l2-agent.ts';

const JOBS = 12;
const canRun = process.getuid?.() === 0 && spawnSync('sh', ['-c', 'command -v bwrap']).status === 0;
if (!canRun) console.log('  (skipped: needs root and bubblewrap for the namespaces)');

const tool = (name: string) => `    - inline:
        name: "${name}"
        description: "${name} a job"
        input_schema: { type: "object", properties: { job: { type: "string" } }, required: ["job"] }`;

/** The agent's own directory, mounted at /tmp/state in its namespace; `script` is its tool's body ($1 = job). */
function agentDir(root: string, name: string, toolName: string, script: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'data'), { recursive: true });
  // The namespace is the container: the tool runs unsandboxed inside it, as it would in a container image.
  writeFileSync(join(dir, 'claw.yaml'), manifest({ tools: tool(toolName), sandbox: '      level: "none"' }));
  writeFileSync(join(dir, 'claw.runtime.yaml'), `data_dir: ./data\ntools:\n  ${toolName}:\n    exec: { bin: /bin/sh, argv: ["-c", ${JSON.stringify(script)}, "sh", "{{job}}"] }\n`);
  return dir;
}

/** bubblewrap as a container runtime: read-only root, private /tmp, the IPC and state directories bound in, no network. */
function container(ipc: string, state: string): string[] {
  return [
    'bwrap', '--die-with-parent', '--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts',
    '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp',
    '--ro-bind', ROOT, ROOT, '--bind', ipc, '/tmp/ipc', '--bind', state, '/tmp/state', '--chdir', '/tmp/state',
  ];
}

const started = (c: ClawRun) => c.stderr().includes('"session started"');

let seq = 0;
/** A tool call over the agent's stdio; the reply may wait for a worker restart, hence the long bound. */
function call(c: ClawRun, name: string, job: string): Promise<any> {
  const id = `call-${++seq}`;
  c.send({ jsonrpc: '2.0', id, method: 'claw.tool.call', params: { name, arguments: { job }, context: { request_id: id, identity: IDENTITY } } });
  return c.waitFor((m) => m.id === id && ('result' in m || 'error' in m), 45_000);
}

test('two namespaced agents over one shared directory: worker SIGKILLed mid-traffic, nothing lost, nothing run twice', async () => {
  if (!canRun) return;
  const root = mkdtempSync(join(tmpdir(), 'claw-nsipc-'));
  const ipc = join(root, 'ipc');
  mkdirSync(ipc);
  const worker = agentDir(root, 'worker', 'count', 'echo "$1" >> /tmp/state/executions.log; sleep 0.2; echo "counted $1"');
  // The relay sends under the job's request_id. A reply that says nothing ran because the worker has not
  // started its session yet after the restart (INIT, STARTING) is not stored by the transport (docs/transports.md): the relay sends again.
  const send = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLAW)} send fs:/tmp/ipc/worker claw.tool.call "{\\"name\\":\\"count\\",\\"arguments\\":{\\"job\\":\\"$1\\"},\\"context\\":{\\"request_id\\":\\"job-$1\\",\\"identity\\":\\"${IDENTITY}\\"}}" --request-id "job-$1" --timeout 20000 --reply-to front`;
  const relayScript = `for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do out=$(${send}); rc=$?; case "$out" in *'"code":-32600'*'"state":'*) sleep 0.25;; *) break;; esac; done; echo "$out"; echo "exit=$rc"`;
  const front = agentDir(root, 'front', 'relay', relayScript);
  const env = { API_KEY: 'sk-unused-0123456789', HOME: '/tmp/state' };
  const startWorker = () => startClaw(['run', '/tmp/state/claw.yaml', '--start', '--listen', 'fs:/tmp/ipc/worker'], { env, wrap: container(ipc, worker) });
  const procs: ClawRun[] = [];
  try {
    let w = startWorker();
    procs.push(w);
    const f = startClaw(['run', '/tmp/state/claw.yaml', '--start'], { env, wrap: container(ipc, front) });
    procs.push(f);
    const inbox = join(ipc, 'worker', 'inbox');
    for (let i = 0; i < 300 && !(started(w) && started(f)); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(started(w) && started(f) && existsSync(inbox), `both sessions started: ${w.stderr().slice(-800)}`);

    // The front agent cannot see the worker's files, the worker cannot see the front's, neither has a network.
    const log = join(worker, 'executions.log');
    const jobs = Array.from({ length: JOBS }, (_, i) => String(i + 1));
    const replies = jobs.map((j) => call(f, 'relay', j));
    // Kill the worker (its whole namespace dies with bwrap) once a few jobs ran, restart it a moment later.
    for (let i = 0; i < 200 && (existsSync(log) ? readFileSync(log, 'utf8').split('\n').length - 1 : 0) < 3; i++) await new Promise((r) => setTimeout(r, 25));
    w.kill();
    await w.exited;
    await new Promise((r) => setTimeout(r, 500));
    w = startWorker();
    procs.push(w);

    const outs = (await Promise.all(replies)).map((r) => r.result?.content?.map((c: any) => c.text).join('') ?? JSON.stringify(r));
    assert.ok(existsSync(log), `nothing ran: ${outs[0]}\n${f.stderr().slice(-1500)}\n${w.stderr().slice(-1500)}`);
    const ran = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    const counts = new Map<string, number>();
    for (const j of ran) counts.set(j, (counts.get(j) ?? 0) + 1);
    for (const [j, n] of counts) assert.is(n, 1, `job ${j} ran ${n} times`);
    let interrupted = 0;
    jobs.forEach((j, i) => {
      const out = outs[i];
      // Nothing lost: each job has its result, or the transport's "interrupted" answer for one the kill cut short
      // (the worker runs calls concurrently, so several may be in flight).
      if (/"reason":"interrupted"/.test(out)) interrupted++;
      else {
        assert.match(out, `counted ${j}`, `job ${j}: ${out}`);
        assert.match(out, 'exit=0');
        assert.is(counts.get(j), 1, `job ${j} answered but not in the worker's log`);
      }
    });
    assert.ok(interrupted < JOBS, 'jobs sent while the worker was down were run after its restart');
    console.log(`  ${JOBS} jobs across a worker SIGKILL: ${ran.length} executions, ${interrupted} interrupted`);

    // Resending every job (same request_id) gets the stored answers; nothing runs again.
    const again = (await Promise.all(jobs.map((j) => call(f, 'relay', j)))).map((r) => r.result?.content?.map((c: any) => c.text).join('') ?? '');
    jobs.forEach((j, i) => assert.is(again[i].replace(/"id":"[^"]*"/g, ''), outs[i].replace(/"id":"[^"]*"/g, ''), `job ${j} resent`));
    assert.equal(readFileSync(log, 'utf8').split('\n').filter(Boolean), ran, 'no job ran again');
    for (const p of procs) assert.equal(p.garbage, [], 'stdout carries protocol messages only');
  } finally {
    for (const p of procs) p.kill();
    await Promise.all(procs.map((p) => p.exited));
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
