// A2A tasks through dist/claw.mjs and the official client (@a2a-js/sdk): kept in the memory database across a
// SIGKILL (docs/a2a.md "Tasks"), and CancelTask during a slow exec tool kills the tool's processes. The tool is
// `sleep <d>` with a duration no other test uses, so `ps` finds this test's processes and nothing else.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { rpc, type HttpClaw } from './helpers/http-claw.ts';
import { a2aManifest, a2aRuntime, bearerFetch, startA2aAgent, type A2aAgent, SLOW_TOOL_RULES } from './helpers/a2a-agent.ts';
import { sleep } from './helpers/e2e-util.ts';

const TOKEN = 'a2a-tasks-e2e-token-51c0de';
let seq = 0;
const uniqueSleep = () => `311.${process.pid}${++seq}`;

const manifest = (approval = false) =>
  a2aManifest({
    name: 'a2a-tasks',
    personality: 'You run slow jobs.',
    supervised: approval,
    spec: `  tools:
    - inline:
        name: "slow"
        description: "Runs a slow job"
        input_schema: { type: "object" }
        timeout_ms: 60000
  memory:
    inline:
      stores:
        - { name: "context", type: "conversation", backend: "sqlite" }
`,
    sandbox: 'process',
  });

/** `cmd`: the slow tool's shell command (default `sleep <d>`); `runtime`: a wrapper run in place of node. */
async function start(dataDir: string, d: string, approval = false, o: { cmd?: string; runtime?: string } = {}): Promise<A2aAgent> {
  return startA2aAgent({
    manifest: manifest(approval),
    rules: SLOW_TOOL_RULES,
    config: a2aRuntime({
      before: `data_dir: ${dataDir}
sandbox:
  allow_downgrade: { bubblewrap: none }
`,
      exec: { slow: o.cmd ?? `sleep ${d}` },
      tools: true,
    }),
    env: { A2A_TOKEN: TOKEN },
    runtime: o.runtime,
  });
}

const withToken = bearerFetch(TOKEN);

const client = (h: HttpClaw) =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: withToken })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: withToken }),
    }),
  ).createFromUrl(new URL(h.url).origin);

const send = (t: string, o: { taskId?: string; now?: boolean } = {}): any => ({
  tenant: '',
  configuration: o.now ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true } : undefined,
  metadata: undefined,
  message: { messageId: crypto.randomUUID(), contextId: '', taskId: o.taskId ?? '', role: 1, parts: [{ content: { $case: 'text' as const, value: t }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
});

/** Live (not zombie) processes whose command line runs `sleep <d>`: pids, or command lines with `args`. */
function ours(d: string): number[];
function ours(d: string, args: true): string[];
function ours(d: string, args?: true): (number | string)[] {
  const out = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => !!m && !m[2].startsWith('Z') && m[3].includes(`sleep ${d}`) && !m[3].startsWith('ps '))
    .map((m) => (args ? m[3] : Number(m[1])));
}
const killOurs = (d: string) => ours(d).forEach((pid) => { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } });

async function until(what: string, ms: number, ok: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) assert.unreachable(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

test('tasks are in the memory database: after a SIGKILL mid-task GetTask and ListTasks answer, none left working', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'claw-a2a-tasks-'));
  const d = uniqueSleep();
  let h: HttpClaw | undefined;
  try {
    h = await start(dataDir, d);
    assert.match(h.c.stderr(), '"tasks":"memory"');
    const c = await client(h);
    const done: any = await c.sendMessage(send('hello'));
    assert.is(done.status.state, 3 /* COMPLETED */);
    const running: any = await c.sendMessage(send('slow', { now: true }));
    assert.is(running.status.state, 2 /* WORKING */);
    await until('the tool runs', 10_000, () => ours(d).length > 0);
    h.c.kill();
    await h.c.exited;
    await h.stop();

    h = await start(dataDir, d);
    const c2 = await client(h);
    const got: any = await c2.getTask({ id: running.id, historyLength: 10, tenant: '' });
    assert.is(got.status.state, 4 /* FAILED */);
    assert.match(got.status.message.parts[0].content.value, /stopped while this task was running/);
    const old: any = await c2.getTask({ id: done.id, historyLength: 10, tenant: '' });
    assert.is(old.status.state, 3);
    assert.is(old.artifacts[0].parts[0].content.value, 'Hello.');
    const listed: any = await c2.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 50, pageToken: '', historyLength: 0, statusTimestampAfter: undefined, includeArtifacts: false } as any);
    assert.equal(new Set(listed.tasks.map((t: any) => t.id)), new Set([done.id, running.id]));
    assert.ok(listed.tasks.every((t: any) => t.status.state !== 2), 'none left working');
    const working: any = await c2.listTasks({ tenant: '', contextId: '', status: 2, pageSize: 50, pageToken: '', historyLength: 0, statusTimestampAfter: undefined, includeArtifacts: false } as any);
    assert.is(working.tasks.length, 0);
  } finally {
    await h?.stop();
    killOurs(d);
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a supervised tool call: input_required, "approve" on the task, then completed; or the operator approves', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'claw-a2a-tasks-'));
  let h: HttpClaw | undefined;
  try {
    h = await start(dataDir, '0.1', true);
    const c = await client(h);
    const held: any = await c.sendMessage(send('slow'));
    assert.is(held.status.state, 6 /* TASK_STATE_INPUT_REQUIRED */, JSON.stringify(held.status));
    assert.match(held.status.message.parts[0].content.value, 'run the tool "slow"');
    const done: any = await c.sendMessage(send('approve', { taskId: held.id }));
    assert.is(done.id, held.id);
    assert.is(done.status.state, 3 /* COMPLETED */, JSON.stringify(done.status));
    assert.is(done.artifacts[0].parts[0].content.value, 'JOB-DONE');

    // The operator answers instead, with claw.tool.approve on the CKP endpoint (request_id from the log).
    const second: any = await c.sendMessage(send('slow'));
    assert.is(second.status.state, 6);
    const logged = h.c.stderr().split('\n').filter((l) => l.includes('"approval requested"')).map((l) => JSON.parse(l).request_id);
    const approved = await rpc(h.url, { jsonrpc: '2.0', id: 1, method: 'claw.tool.approve', params: { request_id: logged.at(-1) } }, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(approved.json.result, { acknowledged: true }, JSON.stringify(approved.json));
    let got: any;
    await until('the task completes', 10_000, async () => (got = await c.getTask({ id: second.id, historyLength: 0, tenant: '' })).status?.state === 3);
    assert.is(got.artifacts[0].parts[0].content.value, 'JOB-DONE');
  } finally {
    await h?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

// Without bubblewrap: node in a mount namespace where bwrap is /dev/null (needs root and unshare -m).
const HIDE_BWRAP = 'for b in /usr/bin/bwrap /bin/bwrap; do [ -e "$b" ] && mount --bind /dev/null "$b"; done';
const canHideBwrap = spawnSync('unshare', ['-m', 'sh', '-c', HIDE_BWRAP]).status === 0;

for (const variant of ['as this machine runs tools', 'without bubblewrap'] as const) {
test(`CancelTask during a slow exec tool (${variant}): the task is canceled and no process of the tool remains`, async () => {
  if (variant === 'without bubblewrap' && !canHideBwrap) {
    console.log('  skipped: needs root and unshare -m to hide bubblewrap');
    return;
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'claw-a2a-tasks-'));
  const d = uniqueSleep();
  let h: HttpClaw | undefined;
  try {
    let runtime: string | undefined;
    if (variant === 'without bubblewrap') {
      runtime = join(dataDir, 'node-without-bwrap.sh');
      writeFileSync(runtime, `#!/bin/sh\nexec unshare -m sh -c '${HIDE_BWRAP}; exec "$0" "$@"' ${process.execPath} "$@"\n`, { mode: 0o755 });
    }
    // A detached grandchild (setsid) besides the tool's own sleep: it is not in the tool's process group.
    h = await start(dataDir, d, false, { cmd: `setsid sleep ${d} & sleep ${d}`, runtime });
    const c = await client(h);
    const running: any = await c.sendMessage(send('slow', { now: true }));
    await until('the tool runs', 10_000, () => ours(d).length >= 2);
    if (variant === 'without bubblewrap') assert.not.ok(ours(d, true).some((a) => a.includes('bwrap')), ours(d, true).join('\n'));
    const canceled: any = await c.cancelTask({ id: running.id, tenant: '', metadata: undefined } as any);
    assert.is(canceled.status.state, 5 /* CANCELED */);
    await until('no process of the tool remains', 5_000, () => ours(d).length === 0);
    const got: any = await c.getTask({ id: running.id, historyLength: 0, tenant: '' });
    assert.is(got.status.state, 5, 'a late end of the turn does not change it');
    assert.ok(h.c.child.exitCode === null, 'the runtime is still up');
  } finally {
    await h?.stop();
    killOurs(d);
    rmSync(dataDir, { recursive: true, force: true });
  }
});
}

test.run();
