// Durability of claw.memory.store end to end (profile §8: a reply means durable): a child `claw run`
// storing in a loop is SIGKILLed at random moments 50 times and every acknowledged entry is there after each
// restart; a truncated journal; a corrupt snapshot (clear error naming the file, previous snapshot kept); a full
// disk (a 640 KiB tmpfs in a private mount namespace: the write fails with -32030, nothing acknowledged is lost).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initParams, startClaw, type ClawRun } from './helpers/claw-process.ts';
import { assertCleanStreams, stderrRecords } from './helpers/e2e-util.ts';
import { agentDir, all, rid, startAgent, store } from './memory-agent.ts';
import { corruptSnapshot } from '../helpers/corrupt-snapshot.ts';

const dirs: string[] = [];
const live: ClawRun[] = [];
const dbFile = (dir: string) => join(dir, '.claw-data', 'memory', 'memory-0.db');

/**
 * Resolves once <file> is the snapshot the journal continues (the journal header's base id, bytes 8–16, equals the
 * id in <file>'s 48-byte trailer): no automatic snapshot is in flight. Gives up after 5 s (the assertions then tell).
 */
async function snapshotLanded(file: string): Promise<void> {
  const hex = (b: Buffer) => b.toString('hex');
  for (const end = Date.now() + 5000; Date.now() < end; await new Promise((r) => setTimeout(r, 10))) {
    try {
      const j = readFileSync(`${file}.claw-journal`).subarray(8, 16);
      const s = readFileSync(file);
      if (hex(j) === hex(s.subarray(s.length - 40, s.length - 32))) return;
    } catch {
      // not there yet
    }
  }
}

/** A request that also settles (undefined) when the process dies first. */
function requestOrExit(c: ClawRun, method: string, params: unknown): Promise<any | undefined> {
  return Promise.race([c.request(method, params).catch(() => undefined), c.exited.then(() => undefined)]);
}

/** One agent directory killed `rounds` times; returns what it acknowledged and how many torn tails were dropped. */
async function killLoop(lane: number, rounds: number): Promise<{ acked: number; torn: number }> {
  // Small snapshot thresholds, so kills also land inside snapshot rotations, not only journal appends.
  const a = agentDir({ config: 'memory:\n  snapshot: { ratio: 0.5, min_journal_bytes: 8192 }\n' });
  dirs.push(a.dir);
  const acked = new Map<string, string>();
  let torn = 0;
  for (let round = 0; round <= rounds; round++) {
    const c = startClaw(['run', a.manifest], { cwd: a.dir });
    live.push(c);
    const where = `lane ${lane} round ${round}`;
    c.send({ jsonrpc: '2.0', id: 'init', method: 'claw.initialize', params: initParams() });
    const init = await c.waitFor((m) => m.id === 'init', 30_000); // a loaded machine can be slow to start
    assert.ok(init.result, `${where}: initialize failed ${JSON.stringify(init)} ${c.stderr().slice(-1500)}`);
    const have = new Map((await all(c)).map((e: any) => [e.id, e.content]));
    for (const [id, content] of acked) assert.is(have.get(id), content, `${where}: acknowledged entry ${id} (${content}) missing`);
    const logs = stderrRecords(c.stderr());
    assert.not.ok(logs.some((l) => l.level === 'error'), `${where}: ${c.stderr().slice(-1500)}`);
    if (logs.some((l) => l.code === 'sqlite.journal_torn')) torn++;
    if (round === rounds) {
      // The last restart only checks: it opened cleanly and holds everything acknowledged.
      assertCleanStreams(c);
      assert.is(await c.end(), 0);
      break;
    }
    // Store in a loop (two writes in flight at a time) until the kill lands, 0–240 ms after the first write
    // was acknowledged: the database opens on the first store (docs/memory.md), and a loaded machine must not
    // turn a round into a kill before anything was written.
    let dead = false;
    let armed = false;
    const kill = () => c.child.kill('SIGKILL');
    const arm = () => {
      if (!armed) (armed = true), setTimeout(kill, Math.floor(Math.random() * 240));
    };
    const fallback = setTimeout(kill, 60_000);
    void c.exited.then(() => ((dead = true), clearTimeout(fallback)));
    let i = 0;
    const writer = async () => {
      while (!dead) {
        const content = `${where} entry ${i++} ${'x'.repeat(Math.floor(Math.random() * 200))}`;
        const r = await requestOrExit(c, 'claw.memory.store', { store: 'context', entries: [{ content }], context: { request_id: rid() } });
        if (r?.result) acked.set(r.result.ids[0], content), arm();
        else if (r?.error) assert.unreachable(`${where}: store failed ${JSON.stringify(r.error)}`);
      }
    };
    await Promise.all([writer(), writer()]);
  }
  return { acked: acked.size, torn };
}

test('50 SIGKILLs at random moments while storing: every acknowledged entry is there after each restart', async () => {
  const started = Date.now();
  // Two agents side by side (25 kills each): the board has two cores, and start-up dominates a round.
  const lanes = await Promise.all([killLoop(1, 25), killLoop(2, 25)]);
  const acked = lanes.reduce((n, l) => n + l.acked, 0);
  const torn = lanes.reduce((n, l) => n + l.torn, 0);
  assert.ok(acked >= 50, `only ${acked} writes acknowledged in 50 rounds`);
  console.log(`  crash test: 50 kills, ${acked} acknowledged entries all present, ${torn} torn journal tails dropped, ${Date.now() - started} ms`);
});

test('a truncated journal: the torn last record is dropped with a warning naming the journal, the store goes on', async () => {
  const a = agentDir();
  dirs.push(a.dir);
  let c = await startAgent(a);
  live.push(c);
  const ids: string[] = [];
  for (const content of ['one', 'two', 'three']) ids.push((await store(c, 'context', [{ content }])).result.ids[0]);
  assert.is(await c.end(), 0);
  const journal = `${dbFile(a.dir)}.claw-journal`;
  truncateSync(journal, statSync(journal).size - 5); // a power cut in the middle of the last append
  c = await startAgent(a);
  live.push(c);
  assert.equal((await all(c)).map((e: any) => [e.id, e.content]), [
    [ids[0], 'one'],
    [ids[1], 'two'],
  ]);
  const w = stderrRecords(c.stderr()).find((l) => l.code === 'sqlite.journal_torn');
  assert.ok(w, c.stderr());
  assert.is(w.level, 'warn');
  assert.ok(w.warning.includes(journal), w.warning);
  const four = (await store(c, 'context', [{ content: 'four' }])).result.ids[0];
  assert.is(await c.end(), 0);
  c = await startAgent(a);
  live.push(c);
  assert.equal((await all(c)).map((e: any) => e.id), [ids[0], ids[1], four]);
  assert.not.ok(stderrRecords(c.stderr()).some((l) => l.level === 'warn' && String(l.code).startsWith('sqlite.')), 'reopens cleanly');
  assert.is(await c.end(), 0);
});

test('a corrupt snapshot: warning naming it, recovery from the previous snapshot + journals; both corrupt → -32030 naming the file', async () => {
  const a = agentDir({ config: 'memory:\n  snapshot: { ratio: 0.1, min_journal_bytes: 0 }\n' });
  dirs.push(a.dir);
  let c = await startAgent(a);
  live.push(c);
  const want: [string, string][] = [];
  const file = dbFile(a.dir);
  for (let i = 0; i < 12; i++) {
    const content = `entry ${i} ${'y'.repeat(600)}`;
    want.push([(await store(c, 'context', [{ content }])).result.ids[0], content]);
    // Automatic snapshots are deflated off-thread and written a moment later; one at a time. Wait for this one to
    // land, so the chain of snapshots (and .prev) does not depend on how loaded the machine is.
    await snapshotLanded(file);
  }
  assert.is(await c.end(), 0);
  assert.ok(existsSync(`${file}.prev`), 'several snapshots were taken');
  corruptSnapshot(file);
  c = await startAgent(a);
  live.push(c);
  assert.equal((await all(c)).map((e: any) => [e.id, e.content]), want);
  const w = stderrRecords(c.stderr()).find((l) => l.code === 'sqlite.snapshot_corrupt');
  assert.ok(w, c.stderr());
  assert.ok(w.warning.includes(file), w.warning);
  assert.ok(existsSync(`${file}.corrupt`), 'the bad snapshot is kept for inspection');
  assert.ok(existsSync(`${file}.prev`), 'a previous snapshot is kept');
  assert.is(await c.end(), 0);

  // No good snapshot left to fall back to: memory answers -32030 naming the file, the agent stays up.
  corruptSnapshot(file);
  corruptSnapshot(`${file}.prev`);
  c = await startAgent(a);
  live.push(c);
  const r = await store(c, 'context', [{ content: 'z' }]);
  assert.is(r.error.code, -32030);
  assert.ok(r.error.message.includes(file), r.error.message);
  assert.is((await c.request('claw.status')).result.state, 'READY');
  assert.is(await c.end(), 0);
});

const canMount = spawnSync('unshare', ['-m', 'sh', '-c', 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d" && umount "$d"; r=$?; rmdir "$d"; exit $r']).status === 0;

test('a full disk (640 KiB tmpfs): -32030 naming the journal, nothing acknowledged lost, still serving, reopens', async () => {
  if (!canMount) {
    console.log('  SKIPPED full-disk e2e: cannot mount a tmpfs in a private mount namespace here (needs root or user namespaces); the unit test sqlite-contract covers ENOSPC by an injected fs');
    return;
  }
  const ws = mkdtempSync(join(tmpdir(), 'claw-e2e-fulldisk-'));
  dirs.push(ws);
  const data = join(ws, 'data');
  const out = join(ws, 'out');
  mkdirSync(data);
  mkdirSync(out);
  const a = agentDir({ config: `data_dir: ${data}\n` });
  dirs.push(a.dir);
  // The tmpfs lives as long as the namespace; its content is copied out when claw exits, for the reopen check.
  const wrap = ['unshare', '-m', 'sh', '-c', `mount -t tmpfs -o size=640k tmpfs '${data}' && "$0" "$@"; rc=$?; cp -a '${data}/.' '${out}/'; exit $rc`];
  const c = await startAgent(a, { wrap });
  live.push(c);
  const acked: [string, string][] = [];
  let failure: any;
  for (let i = 0; i < 200 && !failure; i++) {
    const content = `entry ${i} ${'z'.repeat(16 * 1024)}`;
    const r = await store(c, 'context', [{ content }]);
    if (r.result) acked.push([r.result.ids[0], content]);
    else failure = r.error;
  }
  assert.ok(failure, 'the disk filled up');
  assert.is(failure.code, -32030);
  assert.ok(failure.message.includes('memory-0.db.claw-journal') && /ENOSPC|no space/i.test(failure.message), failure.message);
  assert.ok(acked.length > 10, `${acked.length} acknowledged before the disk was full`);
  assert.equal((await all(c)).map((e: any) => [e.id, e.content]), acked);
  assert.is((await c.request('claw.status')).result.state, 'READY');
  assertCleanStreams(c);
  assert.is(await c.end(), 0);
  // Reopen the copied-out data elsewhere: exactly the acknowledged entries.
  const b = agentDir({ config: `data_dir: ${out}\n` });
  dirs.push(b.dir);
  const d = await startAgent(b);
  live.push(d);
  assert.equal((await all(d)).map((e: any) => [e.id, e.content]), acked);
  assert.is(await d.end(), 0);
});

test.after(() => {
  for (const c of live) if (c.child.exitCode === null && c.child.signalCode === null) c.kill();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test.run();
