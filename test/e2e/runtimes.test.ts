// dist/claw.mjs must run on Node 18, 20, 22 and Bun (issue: "no Node-22-only APIs without a fallback").
// scripts/install-runtimes.sh (run by .ci/run) puts the other runtimes under .build/runtimes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CLAW, ROOT } from './helpers/claw-process.ts';

const RUNTIMES: [string, string][] = [
  ['node (this one)', process.execPath],
  ['node18', join(ROOT, '.build/runtimes/node18/node_modules/.bin/node')],
  ['node22', join(ROOT, '.build/runtimes/node22/node_modules/.bin/node')],
  ['bun', join(ROOT, '.build/runtimes/bun/node_modules/.bin/bun')],
];
const session = readFileSync(join(ROOT, 'examples/minimal/session.ndjson'), 'utf8');

for (const [name, bin] of RUNTIMES) {
  const present = existsSync(bin);
  (present ? test : test.skip)(`${name}: a full Level 1 session and claw validate`, () => {
    const run = spawnSync(bin, [CLAW, 'run', 'examples/minimal/claw.yaml'], { cwd: ROOT, input: session, encoding: 'utf8', timeout: 20_000 });
    assert.is(run.status, 0, run.stderr);
    const replies = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(replies, [
      { jsonrpc: '2.0', id: 1, result: { protocolVersion: '0.3.0', agentInfo: { name: 'minimal-bot', version: '0.1.0' }, conformanceLevel: 'level-1', capabilities: {} } },
      { jsonrpc: '2.0', id: 2, result: { state: 'READY', uptime_ms: replies[1].result.uptime_ms } },
      { jsonrpc: '2.0', id: 3, result: { drained: true } },
    ]);
    const v = spawnSync(bin, [CLAW, 'validate', 'examples/home-agent/claw.yaml', '--json'], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
    assert.is(v.status, 0, v.stderr);
    assert.is(JSON.parse(v.stdout).valid, true);
  });
}

test.run();
