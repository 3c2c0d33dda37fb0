// docs/swarm.md: a relative `swarm.bus: fs:` path resolves against claw.runtime.yaml's directory (as
// data_dir does), not against the directory claw run happens to be started in.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, initParams, startClaw } from './helpers/claw-process.ts';

test('swarm.bus fs:./bus is created beside claw.runtime.yaml, not in the working directory', async () => {
  const conf = mkdtempSync(join(tmpdir(), 'claw-swarm-conf-'));
  const elsewhere = mkdtempSync(join(tmpdir(), 'claw-swarm-cwd-'));
  cpSync(join(ROOT, 'examples', 'swarm'), conf, { recursive: true });
  const f = join(conf, 'leader', 'claw.runtime.yaml');
  const text = readFileSync(f, 'utf8').replace(/bus: .*/, 'bus: fs:./bus');
  assert.ok(text.includes('bus: fs:./bus'));
  writeFileSync(f, text);
  const p = startClaw(['run', join(conf, 'leader', 'claw.yaml')], { cwd: elsewhere, env: { LOCAL_CLI_TOKEN: 'local-token' } });
  try {
    p.send({ jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: initParams() });
    const r = await p.waitFor((m) => m.id === 1, 30_000);
    assert.ok(r.result, `${JSON.stringify(r.error)} ${p.stderr().slice(-800)}`);
    const d = await p.request('claw.swarm.discover', { swarm: 'home-team' });
    assert.ok(d.result, JSON.stringify(d.error));
    assert.ok(existsSync(join(conf, 'leader', 'bus')), 'the bus directory is beside the runtime configuration');
    assert.not.ok(existsSync(join(elsewhere, 'bus')), 'nothing in the working directory');
  } finally {
    p.kill();
    rmSync(conf, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  }
});

test.run();
