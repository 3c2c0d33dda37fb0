// The three-process swarm again, over MQTT through Debian's mosquitto on a loopback port:
// presence is the retained status document with a Last Will, requests ride MQTT 5 request/response.
// The shipped dist/claw.mjs (the MQTT swarm bus is in its scheme table: src/runtime/schemes.ts).
// Skipped (with the reason printed) only when mosquitto is not installed; .ci/run installs it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { findMosquitto, startMosquitto, type Mosquitto } from '../helpers/mosquitto.ts';
import { delegation, result, startSwarm, status, type Swarm } from './swarm-setup.ts';

const HAVE = findMosquitto() !== undefined;
if (!HAVE) console.log('SKIP swarm-mqtt e2e: mosquitto not found (scripts/test-deps.sh installs it)');

let broker: Mosquitto;
let s: Swarm;

test.before(async () => {
  if (!HAVE) return;
  broker = await startMosquitto();
  // A peer is given up after 3 s unavailable: longer than the broker restart below plus the workers'
  // reconnect (profile §5 backoff starts at 1 s), whose Last Wills fire when the broker stops.
  s = await startSwarm(() => `mqtt://127.0.0.1:${broker.port}`, '  stale_after_ms: 3000\n  mqtt: { reconnect: { initial_delay_ms: 200, max_delay_ms: 1000 } }\n');
});
test.after(async () => {
  await s?.close();
  await broker?.stop();
});

const t = HAVE ? test : test.skip;

t('discover over MQTT presence: both workers ready, canonical URIs', async () => {
  const peers = await s.waitPeers((p) => status(p, 'worker-a') === 'ready' && status(p, 'worker-b') === 'ready');
  assert.equal(
    [...peers].sort((a, b) => a.identity.localeCompare(b.identity)),
    [
      { identity: 'worker-a', uri: 'claw://local/identity/worker-a', status: 'ready' },
      { identity: 'worker-b', uri: 'claw://local/identity/worker-b', status: 'ready' },
    ],
  );
});

t('delegate → report → result over MQTT; the worker ran its own gated echo', async () => {
  const d = delegation({ name: 'echo', arguments: { text: 'over mqtt' } });
  const t0 = Date.now();
  const ack = await s.procs.leader.request('claw.swarm.delegate', d);
  assert.is(ack.result.acknowledged, true);
  const r = { result: await result(s.procs.leader, d.task_id, 8000) };
  assert.is(r.result.state, 'completed', JSON.stringify(r.result));
  assert.equal(r.result.result.content, [{ type: 'text', text: 'over mqtt' }]);
  assert.equal(r.result.asked, ack.result.peers);
  console.log(`  mqtt swarm: delegate → report → result in ${Date.now() - t0} ms`);
  const denied = delegation({ name: 'shell', arguments: { command: 'id' } });
  await s.procs.leader.request('claw.swarm.delegate', denied);
  const rd = { result: await result(s.procs.leader, denied.task_id, 8000) };
  assert.is(rd.result.error.code, -32041);
  assert.is(rd.result.error.data.failed[0].result.error.code, -32011);
});

t('broadcast over MQTT reaches both workers', async () => {
  s.procs.leader.send({ jsonrpc: '2.0', method: 'claw.swarm.broadcast', params: { swarm: 'home-team', message: { n: 1 } } });
  for (const w of ['worker-a', 'worker-b'] as const) {
    const n = await s.procs[w].waitFor((m) => m.method === 'claw.swarm.broadcast', 5000);
    assert.equal(n.params, { swarm: 'home-team', message: { n: 1 }, from: 'leader' });
  }
});

t('broker restarted mid-task: nothing lost, nothing retried — the report arrives after the reconnect', async () => {
  const d = delegation({ name: 'slow', arguments: { seconds: '2' } });
  const ack = await s.procs.leader.request('claw.swarm.delegate', d);
  await new Promise((r) => setTimeout(r, 300));
  await broker.stop();
  await new Promise((r) => setTimeout(r, 700));
  await broker.start();
  const r = { result: await result(s.procs.leader, d.task_id, 20000) };
  assert.is(r.result.state, 'completed', JSON.stringify(r.result));
  assert.equal(r.result.asked, ack.result.peers, 'one delegation, no retry');
  assert.is(r.result.attempts, 1);
  await s.waitPeers((p) => status(p, 'worker-a') === 'ready' && status(p, 'worker-b') === 'ready', 15000);
});

t('worker SIGKILLed mid-task: its Last Will makes it unavailable, the task fails over; the last one → dead letter', async () => {
  const d = delegation({ name: 'slow', arguments: { seconds: '2' } });
  const ack = await s.procs.leader.request('claw.swarm.delegate', d);
  const victim = ack.result.peers[0] as 'worker-a' | 'worker-b';
  const survivor = victim === 'worker-a' ? 'worker-b' : 'worker-a';
  await new Promise((r) => setTimeout(r, 500));
  const t0 = Date.now();
  s.procs[victim].kill();
  const r = { result: await result(s.procs.leader, d.task_id, 15000) };
  assert.is(r.result.state, 'completed', JSON.stringify(r.result));
  assert.equal(r.result.asked, [victim, victim, survivor]);
  console.log(`  mqtt swarm: kill → failover → completed in ${Date.now() - t0} ms (task itself 2000 ms)`);
  assert.is(status(await s.discover(), victim), 'unavailable');

  const d2 = delegation({ name: 'slow', arguments: { seconds: '3' } });
  await s.procs.leader.request('claw.swarm.delegate', d2);
  await new Promise((r) => setTimeout(r, 400));
  s.procs[survivor].kill();
  const r2 = { result: await result(s.procs.leader, d2.task_id, 15000) };
  assert.is(r2.result.state, 'dead-letter', JSON.stringify(r2.result));
  assert.is(r2.result.error.code, -32040);
});

test.run();
