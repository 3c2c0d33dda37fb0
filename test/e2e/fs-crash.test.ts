// Crash test of the filesystem transport: 50 cycles in which a writer (`claw send`) and the
// reader (`claw run` serving fs:) are SIGKILLed at random moments. The writer retries with the same
// request_id until it has an answer (at-least-once delivery). Checked: no partial read (no parse
// error ever answered), nothing lost (every request gets a definitive answer), nothing executed twice
// (count.log), a successful answer means exactly one execution, and a request cut off mid-run is
// answered "interrupted" and never run again (docs/transports.md, "guarantees").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { CLAW } from './helpers/claw-process.ts';
import { agentDir, countCall, daemon, initialize } from './fs-agent.ts';
import { connectFsClient } from '../../src/transports/fs/client-fs.ts';

const CYCLES = 50;

function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test(`fs transport: ${CYCLES} cycles of writer and reader SIGKILLed at random`, async () => {
  const seed = Number(process.env.CLAW_CRASH_SEED ?? Date.now() % 100000);
  const rand = rng(seed);
  // The tool appends first and answers 80 ms later: a reader killed in between leaves an execution
  // without a stored answer, the case at-most-once recovery is for.
  const dir = agentDir(`transports:\n  - listen: fs:ipc\n    fs: { poll_interval_ms: 20, tmp_max_age_ms: 1000 }\n`);
  const cfg = join(dir, 'claw.runtime.yaml');
  const text = readFileSync(cfg, 'utf8').replace('echo counted $0', 'sleep 0.08; echo counted $0');
  (await import('node:fs')).writeFileSync(cfg, text);
  const ipc = join(dir, 'ipc');
  let reader = daemon(dir);
  const stats = { readerKills: 0, writerKills: 0, ok: 0, interrupted: 0, beforeInit: 0 };
  const answers = new Map<string, any>();
  const client = async () => {
    while (!existsSync(join(ipc, 'inbox'))) await sleep(10);
    return connectFsClient(`fs:${ipc}?poll_interval_ms=20`, { baseDir: dir });
  };
  let c = await client();
  const ensureReady = async () => {
    const st: any = await c.request({ jsonrpc: '2.0', id: 's', method: 'claw.status' }, { timeoutMs: 10_000 });
    if (st.result?.state === 'READY') return;
    const init: any = await c.request({ jsonrpc: '2.0', id: 'i', method: 'claw.initialize', params: initialize() }, { timeoutMs: 10_000 });
    assert.ok(init.result, `initialize: ${JSON.stringify(init)} ${reader.stderr().slice(-800)}`);
  };
  try {
    for (let i = 0; i < CYCLES; i++) {
      await ensureReady();
      const tag = `c${i}`;
      const writer = spawn(process.execPath, [CLAW, 'send', `fs:${ipc}`, 'claw.tool.call', JSON.stringify(countCall(tag)), '--request-id', tag], {
        env: { PATH: process.env.PATH ?? '' },
        stdio: 'ignore',
      });
      const writerDone = new Promise((r) => writer.on('exit', r));
      const killWriterAt = rand() * 250;
      const killReaderAt = rand() < 0.6 ? rand() * 300 : undefined;
      const kills: Promise<unknown>[] = [
        sleep(killWriterAt).then(() => {
          if (writer.exitCode === null && writer.signalCode === null) {
            writer.kill('SIGKILL');
            stats.writerKills++;
          }
        }),
      ];
      if (killReaderAt !== undefined) {
        kills.push(
          sleep(killReaderAt).then(async () => {
            reader.child.kill('SIGKILL');
            stats.readerKills++;
            await reader.exited;
          }),
        );
      }
      await Promise.all(kills);
      if (killReaderAt !== undefined) {
        reader = daemon(dir);
        await ensureReady();
      }
      await writerDone;
      // The writer's retry: same request_id until an answer comes (at-least-once delivery).
      let rid = tag;
      let reply: any = await c.request({ jsonrpc: '2.0', id: tag, method: 'claw.tool.call', params: countCall(tag) }, { requestId: rid, timeoutMs: 10_000 });
      if (reply.error?.code === -32600 && reply.error.data?.state) {
        // The restarted reader took the file before this test re-initialized it: refused, not run.
        // A new attempt is a new request_id.
        stats.beforeInit++;
        rid = `${tag}-again`;
        reply = await c.request({ jsonrpc: '2.0', id: tag, method: 'claw.tool.call', params: countCall(tag) }, { requestId: rid, timeoutMs: 10_000 });
      }
      answers.set(tag, reply);
      if (reply.result) stats.ok++;
      else if (reply.error?.data?.reason === 'interrupted') stats.interrupted++;
      else assert.unreachable(`${tag}: unexpected answer ${JSON.stringify(reply)}`);
      // A resend of an answered request_id returns the stored answer, whatever happened before.
      const again = await c.request({ jsonrpc: '2.0', id: tag, method: 'claw.tool.call', params: countCall(tag) }, { requestId: rid, timeoutMs: 10_000 });
      assert.equal(again, reply, `${tag}: stored answer`);
    }
    const lines = readFileSync(join(dir, 'count.log'), 'utf8').split('\n').filter(Boolean);
    const counts = new Map<string, number>();
    for (const l of lines) counts.set(l, (counts.get(l) ?? 0) + 1);
    for (const [tag, reply] of answers) {
      const n = counts.get(tag) ?? 0;
      if (reply.result) assert.is(n, 1, `${tag} answered with a result: executed exactly once`);
      else assert.ok(n <= 1, `${tag} interrupted: executed at most once (${n})`);
      assert.ok(reply.error?.code !== -32700, `${tag}: a partial file was read`);
    }
    assert.is(Math.max(...counts.values()), 1, 'nothing executed twice');
    assert.is(answers.size, CYCLES, 'every request answered');
    assert.ok(stats.readerKills >= 15 && stats.writerKills >= 5, `kills happened: ${JSON.stringify(stats)}`);
    // Nothing is left claimed or queued. A resend can be answered from a reply file an earlier copy
    // of the same request_id left in outbox/ while the reader still claims or retires that copy (the
    // copy may still be in inbox/ when the answer arrives, on a loaded machine): allow it 2 s.
    const queued = () => readdirSync(join(ipc, '.state', 'processing')).length + readdirSync(join(ipc, 'inbox')).filter((n) => n.endsWith('.json')).length;
    const settleBy = Date.now() + 2000;
    while (queued() > 0 && Date.now() < settleBy) await sleep(20);
    assert.equal(readdirSync(join(ipc, '.state', 'processing')), []);
    assert.equal(readdirSync(join(ipc, 'inbox')).filter((n) => n.endsWith('.json')), []);
    console.log(`  crash test seed=${seed} ${JSON.stringify(stats)}`);
  } finally {
    await c.close();
    reader.child.kill('SIGKILL');
    await reader.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
