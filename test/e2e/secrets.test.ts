// Provider secrets (runtime profile §7): a resolved value never reaches stdout or stderr; an
// unresolvable secret_ref is named in a warning, and the agent still reaches READY.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { initParams } from './helpers/claw-process.ts';
import { fixture, withClaw, assertResult, stderrRecords, loadYaml } from './helpers/e2e-util.ts';

const MANIFEST = fixture('manifests', 'secret-provider.yaml');
const SECRET = 'sk-very-secret-value-123';

function assertNoSecret(text: string, where: string): void {
  assert.not.ok(text.includes(SECRET), `the secret value appeared on ${where}`);
  // Not even a recognizable part of it.
  assert.not.ok(text.includes('very-secret-value'), `part of the secret value appeared on ${where}`);
}

for (const level of ['info', 'debug']) {
  test(`TEST_API_KEY set (--log-level ${level}): the value never appears on stdout or stderr through initialize/status/shutdown`, async () => {
    let stdoutRaw = '';
    await withClaw(
      ['run', MANIFEST, '--log-level', level],
      async (c) => {
        c.child.stdout.on('data', (d) => (stdoutRaw += d));
        const init = await c.request('claw.initialize', initParams(), 1);
        assertResult(init, 1, { protocolVersion: '0.3.0', agentInfo: { name: 'secret-agent', version: '1.0.0' }, conformanceLevel: 'level-1', capabilities: {} });
        c.send({ jsonrpc: '2.0', method: 'claw.initialized' });
        assert.is((await c.request('claw.status', {}, 2)).result.state, 'READY');
        // Errors that echo input must not carry it either.
        await c.request('claw.status', { key: SECRET }, 3);
        await c.request(`claw.${SECRET}`, {}, 4);
        assertResult(await c.request('claw.shutdown', { reason: 'done' }, 5), 5, { drained: true });
        assert.is(await c.end(), 0);
        const recs = stderrRecords(c.stderr());
        // It resolved: no warning about it.
        assert.equal(
          recs.filter((r) => r.level === 'warn'),
          [],
        );
        assertNoSecret(c.stderr(), 'stderr');
        // stdout: only what the operator itself sent may come back (the method name in -32601's message
        // is the operator's own text); the agent's own replies must not carry the value.
        for (const m of c.messages) if (m.id !== 4) assertNoSecret(JSON.stringify(m), `stdout (reply ${m.id})`);
      },
      { env: { TEST_API_KEY: SECRET } },
    );
    assert.ok(stdoutRaw.length > 0);
  });
}

test('TEST_API_KEY set, manifest sent inline over the wire without a launch manifest: no leak either', async () => {
  await withClaw(
    ['run', '--log-level', 'debug'],
    async (c) => {
      const manifest = loadYaml(MANIFEST);
      const init = await c.request('claw.initialize', initParams({ manifest }), 1);
      assert.is(init.result?.agentInfo?.name, 'secret-agent', JSON.stringify(init));
      assert.is((await c.request('claw.status', {}, 2)).result.state, 'READY');
      assertResult(await c.request('claw.shutdown', {}, 3), 3, { drained: true });
      assert.is(await c.end(), 0);
      assertNoSecret(c.stderr(), 'stderr');
      assertNoSecret(JSON.stringify(c.messages), 'stdout');
    },
    { env: { TEST_API_KEY: SECRET } },
  );
});

test('TEST_API_KEY unset: a warning names TEST_API_KEY, the agent still reaches READY', async () => {
  await withClaw(['run', MANIFEST], async (c) => {
    const init = await c.request('claw.initialize', initParams(), 1);
    assert.is(init.result?.agentInfo?.name, 'secret-agent', JSON.stringify(init));
    assert.is((await c.request('claw.status', {}, 2)).result.state, 'READY');
    const warns = stderrRecords(c.stderr()).filter((r) => r.level === 'warn');
    assert.is(warns.length, 1, c.stderr());
    assert.is(warns[0].secret_ref, 'TEST_API_KEY');
    assert.ok(JSON.stringify(warns[0]).includes('TEST_API_KEY'));
    assert.is(warns[0].provider, 'provider-0');
    assertResult(await c.request('claw.shutdown', {}, 3), 3, { drained: true });
  });
});

test('TEST_API_KEY set to an empty string counts as unset (warning, still READY)', async () => {
  await withClaw(
    ['run', MANIFEST],
    async (c) => {
      await c.request('claw.initialize', initParams(), 1);
      assert.is((await c.request('claw.status', {}, 2)).result.state, 'READY');
      const warns = stderrRecords(c.stderr()).filter((r) => r.level === 'warn');
      assert.equal(
        warns.map((w) => w.secret_ref),
        ['TEST_API_KEY'],
      );
    },
    { env: { TEST_API_KEY: '' } },
  );
});

test.run();
