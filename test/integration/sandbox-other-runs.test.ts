// A tool under bubblewrap whose binds show the host's tmp directory (filesystem read-only or full, or a
// mount_path on it) must not see the private directories of other calls: their HOME/TMPDIR and, above
// all, another tool's file-mount secret (docs/security.md "Other calls' private directories"). Each case
// runs a holder call that keeps its secret mounted while a prying call looks for it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';
import { detectHost, type HostCapabilities } from '../../src/sandbox/host.ts';
import { runSandboxed, type RunOptions } from '../../src/sandbox/runner.ts';
import { drainRunDirs } from '../../src/sandbox/run-dirs.ts';
import { sleep, testHost, without } from '../fixtures/sandbox/helpers.ts';

let host: HostCapabilities;
const baseEnv = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' };
const SECRET = 'holder-secret-7f3a9c';
const FOREIGN = 'foreign-runtime-file-51d2';

test.before(async () => {
  host = without(testHost(await detectHost()), 'cgroup');
});

const run = (o: Partial<RunOptions> & { bin: string; argv: string[]; sandbox: SandboxSpec }) => runSandboxed({ env: baseEnv, host, graceMs: 300, ...o });

/** Every file below `dir` on the host (what the runtime itself created there). */
function filesBelow(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesBelow(p));
    else out.push(p);
  }
  return out;
}

async function untilSecretMounted(tmpRoot: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (filesBelow(tmpRoot).some((f) => f.endsWith('/K'))) return;
    await sleep(10);
  }
  throw new Error('the holder never wrote its secret file');
}

const secretUnder = (spec: SandboxSpec): SandboxSpec => ({ ...spec, capabilities: { ...spec.capabilities, secrets: { injection: 'file-mount' } } });

const pryingViews: [string, SandboxSpec][] = [
  ['filesystem read-only', { level: 'process', capabilities: { filesystem: { mode: 'read-only' } } }],
  ['filesystem full', { level: 'process', capabilities: { filesystem: { mode: 'full' } } }],
];

test("a concurrent tool sees neither another call's file-mount secret nor its run directory, nor another runtime's", async () => {
  if (!host.bwrap.works) {
    console.log('  (bubblewrap does not work here: nothing shows another call its binds; skipped)');
    return;
  }
  const tmpRoot = mkdtempSync(join(tmpdir(), 'claw-tmproot-'));
  // What a second runtime on the same host left in the same tmp root (pid 1 is alive, so no sweep removes it).
  for (const name of ['claw-private-1-foreign/run-a', 'claw-run-1-legacy', 'claw-secrets-1-legacy']) {
    mkdirSync(join(tmpRoot, name), { recursive: true });
    writeFileSync(join(tmpRoot, name, 'F'), FOREIGN);
  }
  const views: [string, SandboxSpec][] = [
    ...pryingViews,
    ['filesystem scoped, mount_path on the tmp root', { level: 'process', capabilities: { filesystem: { mode: 'scoped', mount_paths: [{ path: tmpRoot, permissions: 'ro' }] } } }],
  ];
  try {
    for (const [name, spec] of views) {
      // The holder keeps its secret mounted until the prying call is done, then is stopped.
      const stop = new AbortController();
      const holder = run({
        bin: 'sh',
        argv: ['-c', 'cat "$K_FILE" > /dev/null && echo held > "$TMPDIR/mine" && sleep 30'],
        signal: stop.signal,
        sandbox: secretUnder({ level: 'process', capabilities: { filesystem: { mode: 'deny' } } }),
        secrets: { K: SECRET },
        tmpRoot,
        timeoutMs: 10_000,
      });
      await untilSecretMounted(tmpRoot);
      const pry = await run({
        bin: 'sh',
        // Everything it can find under the tmp root, every file's content, then its own secret and TMPDIR.
        argv: ['-c', `find "${tmpRoot}" 2>/dev/null; find "${tmpRoot}" -type f -exec cat {} + 2>/dev/null; echo; echo own=$(cat "$S_FILE"); echo x > "$TMPDIR/w" && echo tmp-writable`],
        sandbox: secretUnder(spec),
        secrets: { S: 'own-secret' },
        tmpRoot,
        timeoutMs: 10_000,
      });
      assert.ok(filesBelow(tmpRoot).some((f) => f.endsWith('/K')), `${name}: the holder's secret was there all along`);
      stop.abort();
      const h = await holder;
      assert.ok(h.aborted && h.stderr === '', `${name}: the holder ran until stopped (${h.stderr})`);
      assert.not.match(pry.stdout, SECRET, `${name}: another call's secret was read`);
      assert.not.match(pry.stdout, FOREIGN, `${name}: another runtime's private file was read`);
      assert.not.match(pry.stdout, /\/K$/m, `${name}: another call's secret file was listed`);
      assert.not.match(pry.stdout, /\/mine$/m, `${name}: another call's run directory was listed`);
      assert.match(pry.stdout, /^own=own-secret$/m, `${name}: its own secret is still there`);
      assert.match(pry.stdout, /^tmp-writable$/m, `${name}: its own TMPDIR is still writable`);
    }
  } finally {
    drainRunDirs();
    rmSync(tmpRoot, { recursive: true, force: true });
  }
  assert.not.ok(existsSync(tmpRoot));
});

test.run();
