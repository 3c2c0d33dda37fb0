// The fs transport's sweep across a wall-clock step (src/transports/fs/maintenance.ts, src/kernel/wall-age.ts;
// docs/boards.md "Clock"). A board without an RTC starts at 1970: the files it names then carry 1970
// stamps, and when NTP steps the clock to today a sweep by `now - stamp` would take them for 56 years old.
// The process's Date.now is stepped here as such a jump would be seen (the file names read it too).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createFsTransport } from '../../src/transports/fs/transport.ts';
import { resolveFsOptions } from '../../src/transports/fs/options.ts';
import { captureLogger, until } from './helpers/fakes.ts';
import { echo } from './transport-contract.ts';
import { systemClock } from '../../src/node/clock.ts';

const realNow = Date.now;
const ls = (d: string) => readdirSync(d).sort();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('booted at 1970, NTP steps 56 years forward: a reply not yet collected and the archive are kept', async () => {
  const t0 = realNow();
  Date.now = () => 10_000 + (realNow() - t0);
  const dir = mkdtempSync(`${tmpdir()}/claw-fs-jump-`);
  // Swept every second (tmp_max_age_ms / 2); a reply nobody collects and the archive are kept 60 s.
  const t = createFsTransport({ dir, clock: systemClock, options: resolveFsOptions({ poll_interval_ms: 20, fsync: false, processed: 'archive', retention_ms: 60_000, tmp_max_age_ms: 2000 }), log: captureLogger() });
  try {
    t.start(echo);
    const name = `${String(BigInt(Date.now()) * 1_000_000n).padStart(19, '0')}-r1.json`;
    writeFileSync(`${dir}/inbox/${name}.tmp`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'm' }));
    renameSync(`${dir}/inbox/${name}.tmp`, `${dir}/inbox/${name}`);
    await until(() => ls(`${dir}/outbox`).length === 1, 3000);
    assert.ok(ls(`${dir}/outbox`)[0] < '1000000000000000000', 'named in 1970');
    Date.now = realNow; // the step
    await sleep(2500); // two sweeps after it
    assert.is(ls(`${dir}/outbox`).length, 1, 'the reply written seconds ago is still there to collect');
    assert.is(ls(`${dir}/archive`).length, 1, 'the request archived seconds ago is kept');
  } finally {
    Date.now = realNow;
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
