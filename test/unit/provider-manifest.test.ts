// The provider chain built from a manifest loaded by the real loader: an inline network provider that
// is down, falling back to an inline `custom` provider whose rules file sits beside the manifest.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadManifestFile } from '../../src/manifest/loader.ts';
import { loadWireManifest } from '../../src/runtime/wire-manifest.ts';
import { createFsReader } from '../../src/node/fs-reader.ts';
import { createProviderClient } from '../../src/provider/index.ts';
import { deadUrl } from '../helpers/fake-llm-server.ts';
import { setup, signal, user } from './provider-fixtures.ts';

test('manifest → chain: primary unreachable, offline rules beside the manifest answer', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-provm-'));
  try {
    writeFileSync(
      join(dir, 'claw.yaml'),
      `claw: "0.3.0"
kind: Claw
metadata: { name: offline-demo }
spec:
  identity: { inline: { personality: "helpful" } }
  providers:
    - inline: { protocol: openai-compatible, endpoint: "${await deadUrl()}/v1", model: llama3, auth: { type: none }, retry: { max_attempts: 1 }, fallback: [{ provider_ref: offline }] }
    - inline: { name: offline, protocol: custom, endpoint: "file:offline-rules.yaml", model: rules, auth: { type: none } }
`,
    );
    writeFileSync(join(dir, 'offline-rules.yaml'), 'rules:\n  - contains: hello\n    message: "hi, offline"\n');
    const loaded = await loadManifestFile(join(dir, 'claw.yaml'), { reader: createFsReader() });
    assert.equal(loaded.issues, []);
    const { deps, log } = setup([]);
    deps.manifest = loaded.manifest!;
    const r = await createProviderClient(deps).complete({ messages: [user('hello there')], signal: signal() });
    const { fallbacks, ...answer } = r as typeof r & { fallbacks?: { provider: string; reason: string; url?: string }[] };
    assert.equal(answer, { text: '{"message":{"content":"hi, offline"}}', toolCallCount: 0, provider: 'offline', model: 'rules' });
    // The provider that failed first is named with its endpoint, so the user learns why the fallback answered.
    assert.equal(fallbacks?.map((f) => [f.provider, f.reason, typeof f.url]), [['provider-0', 'connect', 'string']]);
    assert.equal(log.entries.map((e) => [e.msg, e.fields?.provider, e.fields?.reason]), [['provider failed', 'provider-0', 'connect']]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('prepare(): rules files and secrets checked at start-up without a request; one record per problem', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-provm-'));
  try {
    writeFileSync(
      join(dir, 'claw.yaml'),
      `claw: "0.3.0"
kind: Claw
metadata: { name: prep }
spec:
  identity: { inline: { personality: "helpful" } }
  providers:
    - inline: { protocol: openai-compatible, endpoint: "http://127.0.0.1:1/v1", model: m, auth: { type: bearer, secret_ref: NOPE_KEY }, fallback: [{ provider_ref: offline }, { provider_ref: keyed }] }
    - inline: { name: offline, protocol: custom, endpoint: "file:missing.yaml", model: rules, auth: { type: none } }
    - inline: { name: keyed, protocol: anthropic-native, endpoint: "http://127.0.0.1:1", model: c, auth: { type: api-key-header, secret_ref: LLM_KEY } }
`,
    );
    const loaded = await loadManifestFile(join(dir, 'claw.yaml'), { reader: createFsReader() });
    assert.equal(loaded.issues, []);
    const { deps } = setup([]);
    deps.manifest = loaded.manifest!;
    const problems = await createProviderClient(deps).prepare();
    assert.equal(problems, [
      { provider: 'provider-0', reason: 'secret', message: 'provider-0: secret_ref "NOPE_KEY" could not be resolved (secret store, environment, CLAW_SECRETS_DIR unset)' },
      { provider: 'offline', reason: 'config', message: `offline: custom provider: cannot read rules file ${dir}/missing.yaml (ENOENT)` },
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a wire manifest\'s rules files: devices, paths out of its root and FIFOs are refused at once; one inside is read', async () => {
  const base = mkdtempSync(join(tmpdir(), 'claw-provw-'));
  const dir = join(base, 'agent');
  try {
    mkdirSync(dir);
    writeFileSync(join(base, 'outside.yaml'), 'rules:\n  - contains: hello\n    message: "leaked"\n');
    writeFileSync(join(dir, 'rules.yaml'), 'rules:\n  - contains: hello\n    message: "inside"\n');
    execFileSync('mkfifo', [join(dir, 'pipe.yaml')]);
    const custom = (name: string, endpoint: string) => ({ inline: { name, protocol: 'custom', endpoint, model: 'rules', auth: { type: 'none' } } });
    const names = ['zero', 'climb', 'fifo', 'inside'];
    const sent = {
      kind: 'Claw',
      metadata: { name: 'wire' },
      spec: {
        identity: { inline: { personality: 'p' } },
        providers: [
          { inline: { ...custom('zero', 'file:/dev/zero').inline, fallback: names.slice(1).map((n) => ({ provider_ref: n })) } },
          custom('climb', 'file:../outside.yaml'),
          custom('fifo', 'file:pipe.yaml'),
          custom('inside', 'file:rules.yaml'),
        ],
      },
    };
    const loaded = await loadWireManifest(sent, '0.3.0', { reader: createFsReader(), cwd: dir, config: {} });
    assert.equal(loaded.issues, []);
    const { deps } = setup([]);
    deps.manifest = loaded.manifest!;
    const t0 = Date.now();
    const problems = await createProviderClient(deps).prepare();
    assert.ok(Date.now() - t0 < 2000, `prepared in ${Date.now() - t0} ms`);
    assert.equal(problems, [
      { provider: 'zero', reason: 'config', message: 'zero: custom provider: cannot read rules file /dev/zero (outside)' },
      { provider: 'climb', reason: 'config', message: `climb: custom provider: cannot read rules file ${base}/outside.yaml (outside)` },
      { provider: 'fifo', reason: 'config', message: `fifo: custom provider: cannot read rules file ${dir}/pipe.yaml (not-regular)` },
    ]);
    const r = await createProviderClient(deps).complete({ messages: [user('hello')], signal: signal() });
    assert.is(r.provider, 'inside');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test.run();
