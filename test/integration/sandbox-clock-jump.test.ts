// The SIGTERM → SIGKILL grace of src/sandbox/kill.ts is measured on the monotonic clock. A board without an
// RTC steps its wall clock when NTP first sets it, and an operator's `date -s` can step it back
// (docs/boards.md "Clock"). The process's own Date.now is stepped here, as such a jump would be seen.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { detectHost, type HostCapabilities } from '../../src/sandbox/host.ts';
import { runSandboxed } from '../../src/sandbox/runner.ts';
import { killAll, findMarked, marker, settled, sleep, testHost, without } from '../fixtures/sandbox/helpers.ts';

let host: HostCapabilities;
const YEAR = 365 * 86_400_000;
const realNow = Date.now;

test.before(async () => {
  host = without(testHost(await detectHost()), 'bwrap', 'cgroup');
});
test.after.each(() => {
  Date.now = realNow;
});

function ignoringTerm(m: string) {
  return runSandboxed({
    bin: 'bash',
    argv: ['-c', 'trap "" TERM; while :; do sleep 0.05; done'],
    env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
    extraEnv: { CLAW_MARKER: m },
    sandbox: { level: 'process' },
    host,
    allowDowngrade: { bubblewrap: 'none' },
    timeoutMs: 200,
    graceMs: 400,
  });
}

/** The run, or 'hung' when it has not ended `ms` after the jump. */
async function withJump(jumpMs: number, ms = 4000) {
  const m = marker();
  const r = ignoringTerm(m);
  await sleep(300); // timed out at 200 ms, SIGTERM sent: inside the grace
  Date.now = () => realNow() + jumpMs;
  const out = await Promise.race([r, sleep(ms).then(() => 'hung' as const)]);
  Date.now = realNow;
  if (out === 'hung') killAll(findMarked(m));
  return { out, m };
}

test('the wall clock set back a year during the grace: the tool is still SIGKILLed when the grace ends', async () => {
  const { out, m } = await withJump(-YEAR);
  assert.is.not(out, 'hung', 'SIGKILL held off by the backward jump');
  if (out === 'hung') return;
  assert.is(out.signal, 'SIGKILL');
  assert.ok(out.durationMs < 2000, String(out.durationMs));
  assert.equal(await settled(m), []);
});

test('the wall clock set forward a day during the grace: the grace is still given', async () => {
  const { out, m } = await withJump(86_400_000);
  if (out === 'hung') return assert.unreachable('hung');
  assert.is(out.signal, 'SIGKILL');
  assert.ok(out.durationMs >= 580, `grace respected (${out.durationMs} ms)`);
  assert.equal(await settled(m), []);
});

test.run();
