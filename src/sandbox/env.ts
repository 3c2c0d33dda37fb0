// The child's environment (spec §5.8 `secrets.injection`, §10.2 "Secret exfiltration → host-boundary
// injection"). The runtime's own environment holds provider keys and secret refs, so a tool gets an
// allowlist of harmless variables, HOME/TMPDIR pointing into its sandbox, and secrets only when the
// sandbox asks for them:
//   environment   → as variables NAME=value
//   file-mount    → a 0600 file in a private 0700 directory; NAME_FILE=<path>
//   host-boundary → not given to the child at all (the host uses them on the tool's behalf)
import { chmod, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClawError } from '../protocol/errors.ts';
import { takeSecretsDir } from './run-dirs.ts';
import type { Injection } from './spec-view.ts';

export const ENV_ALLOWLIST: readonly string[] = ['PATH', 'LANG', 'LC_ALL', 'TZ'];
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface EnvInput {
  /** Where allowlisted values come from (the runtime's environment, passed in by the target). */
  base: Record<string, string | undefined>;
  allowlist?: readonly string[];
  secrets?: Record<string, string>;
  injection: Injection;
  home: string;
  tmpdir: string;
  /** Directory holding the secret files (file-mount); its path as the child sees it. */
  secretDir?: string;
  /** Non-secret variables the tool binding sets explicitly (not filtered). */
  extra?: Record<string, string>;
}

export function buildEnv(i: EnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of i.allowlist ?? ENV_ALLOWLIST) {
    const v = i.base[k];
    if (typeof v === 'string') env[k] = v;
  }
  env.PATH ??= DEFAULT_PATH;
  Object.assign(env, i.extra);
  env.HOME = i.home;
  env.TMPDIR = i.tmpdir;
  const secrets = i.secrets ?? {};
  for (const name of Object.keys(secrets)) {
    if (!NAME.test(name)) throw new ClawError('sandbox-secret-name', `secret name "${name}" is not a valid environment variable name`);
  }
  if (i.injection === 'environment') Object.assign(env, secrets);
  else if (i.injection === 'file-mount') {
    if (Object.keys(secrets).length > 0 && !i.secretDir) throw new ClawError('sandbox-secret-dir', 'file-mount injection needs a secret directory');
    for (const name of Object.keys(secrets)) env[`${name}_FILE`] = join(i.secretDir!, name);
  }
  return env;
}

/** Writes each secret to `<dir>/<NAME>` with mode 0600 in a fresh 0700 directory among this process's private ones (run-dirs.ts). */
export async function writeSecretFiles(secrets: Record<string, string>, root = tmpdir()): Promise<{ dir: string; remove(): Promise<void> }> {
  for (const name of Object.keys(secrets)) {
    if (!NAME.test(name)) throw new ClawError('sandbox-secret-name', `secret name "${name}" is not a valid environment variable name`);
  }
  const dir = takeSecretsDir(root);
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    await chmod(dir, 0o700);
    for (const [name, value] of Object.entries(secrets)) await writeFile(join(dir, name), value, { mode: 0o600 });
  } catch (e) {
    await remove();
    throw e;
  }
  return { dir, remove };
}
