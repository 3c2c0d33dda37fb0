import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildEnv, DEFAULT_PATH, writeSecretFiles } from '../../src/sandbox/env.ts';

const base = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', TZ: 'UTC', HOME: '/root', OPENAI_API_KEY: 'sk-x', CLAW_TEST_SECRET: 's3', LD_PRELOAD: '/evil.so' };

test('only the allowlist passes; HOME and TMPDIR point into the sandbox', () => {
  const env = buildEnv({ base, injection: 'host-boundary', home: '/w', tmpdir: '/t' });
  assert.equal(env, { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', TZ: 'UTC', HOME: '/w', TMPDIR: '/t' });
});

test('PATH gets a default; extra variables are added as given; a custom allowlist is honoured', () => {
  const env = buildEnv({ base: {}, injection: 'host-boundary', home: '/w', tmpdir: '/t', extra: { TOOL_MODE: 'fast' }, allowlist: ['LANG'] });
  assert.equal(env, { PATH: DEFAULT_PATH, TOOL_MODE: 'fast', HOME: '/w', TMPDIR: '/t' });
});

test('secrets: host-boundary → absent, environment → variables, file-mount → NAME_FILE paths', () => {
  const secrets = { API_KEY: 'v1' };
  assert.not.ok('API_KEY' in buildEnv({ base, secrets, injection: 'host-boundary', home: '/w', tmpdir: '/t' }));
  assert.is(buildEnv({ base, secrets, injection: 'environment', home: '/w', tmpdir: '/t' }).API_KEY, 'v1');
  const f = buildEnv({ base, secrets, injection: 'file-mount', home: '/w', tmpdir: '/t', secretDir: '/s' });
  assert.is(f.API_KEY_FILE, '/s/API_KEY');
  assert.not.ok('API_KEY' in f);
});

test('secret names must be variable names', () => {
  assert.throws(() => buildEnv({ base, secrets: { 'A-B': 'x' }, injection: 'environment', home: '/w', tmpdir: '/t' }), /not a valid environment variable name/);
});

test('writeSecretFiles: 0700 directory, 0600 files, removed on request', async () => {
  const s = await writeSecretFiles({ API_KEY: 'v1', OTHER: 'v2' });
  assert.is(statSync(s.dir).mode & 0o777, 0o700);
  assert.is(statSync(join(s.dir, 'API_KEY')).mode & 0o777, 0o600);
  assert.is(readFileSync(join(s.dir, 'OTHER'), 'utf8'), 'v2');
  await s.remove();
  assert.not.ok(existsSync(s.dir));
  try {
    await writeSecretFiles({ '../x': 'v' });
    assert.unreachable('a path-like secret name must be refused');
  } catch (e) {
    assert.match((e as Error).message, /not a valid environment variable name/);
  }
});

test.run();
