// What a new board owner copies from the docs works with the built runtime (dist/claw.mjs):
// - every manifest and primitive document under examples/ passes `claw validate --strict`, with the
//   claw.runtime.yaml beside it;
// - every yaml block in README.md, docs/ and examples/ that starts with `# claw.runtime.yaml` is a complete
//   runtime configuration: it validates as the claw.runtime.yaml of examples/minimal;
// - every `claw <command> … --flag` in their code is a command `claw --help` lists and a flag its own
//   `--help` names;
// - the sizes README.md quotes for dist/ are within 3% of what dist/ holds (measured as build.config.mjs does);
// - docs/boards.md's install of an agent of several files, run into a temp tree, leaves a manifest that validates.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse } from 'yaml';
import { CLAW, ROOT } from './helpers/claw-process.ts';

const dirs: string[] = [];
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function claw(args: string[], cwd = ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLAW, ...args], { cwd, timeout: 30_000, env: { PATH: process.env.PATH ?? '', HOME: tmpdir() } }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** At most `n` at once: a 2-core machine runs other tests beside this one. */
async function pool<T, R>(items: T[], n: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]);
    }
  }));
  return out;
}

function walk(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name.startsWith('.') || e.name === 'node_modules') return [];
    const p = join(dir, e.name);
    return e.isDirectory() ? walk(p, keep) : keep(e.name) ? [p] : [];
  });
}

/** The Markdown a reader follows: README.md, docs/, the examples' READMEs, the sandbox table. */
const MARKDOWN = [join(ROOT, 'README.md'), ...walk(join(ROOT, 'docs'), (n) => n.endsWith('.md')), ...walk(join(ROOT, 'examples'), (n) => n.endsWith('.md')), join(ROOT, 'src', 'sandbox', 'README.md')];

test('every manifest and primitive document under examples/ passes claw validate --strict', async () => {
  const docs = walk(join(ROOT, 'examples'), (n) => /\.(ya?ml|json)$/.test(n) && !n.startsWith('claw.runtime.'))
    .filter((f) => {
      const v = parse(readFileSync(f, 'utf8')) as { kind?: unknown } | null;
      return typeof v?.kind === 'string'; // offline rules, eval scenarios and compose files are not CKP documents
    });
  assert.ok(docs.length >= 20, `found ${docs.length} documents under examples/`);
  const results = await pool(docs, 3, async (f) => ({ f, ...(await claw(['validate', f, '--strict'])) }));
  const failed = results.filter((r) => r.code !== 0).map((r) => `${relative(ROOT, r.f)}: exit ${r.code}\n${r.stderr}`);
  assert.equal(failed, [], failed.join('\n'));
});

/** Fenced yaml blocks of a Markdown file whose first line is `# claw.runtime.yaml…`. */
function runtimeBlocks(file: string): { at: string; text: string }[] {
  const out: { at: string; text: string }[] = [];
  const re = /^```ya?ml\n([\s\S]*?)^```/gm;
  const md = readFileSync(file, 'utf8');
  for (let m = re.exec(md); m; m = re.exec(md)) {
    if (/^# claw\.runtime\.yaml\b/.test(m[1])) out.push({ at: `${relative(ROOT, file)}:${md.slice(0, m.index).split('\n').length}`, text: m[1] });
  }
  return out;
}

test('every yaml block marked "# claw.runtime.yaml" in the docs is a valid runtime configuration', async () => {
  const blocks = MARKDOWN.flatMap(runtimeBlocks);
  assert.ok(blocks.some((b) => b.at.startsWith('docs/runtime-config.md:')), 'the reference block of docs/runtime-config.md is marked');
  assert.ok(blocks.length >= 10, `found ${blocks.length} blocks`);
  const results = await pool(blocks, 3, async (b) => {
    const dir = mkdtempSync(join(tmpdir(), 'claw-docs-'));
    dirs.push(dir);
    copyFileSync(join(ROOT, 'examples', 'minimal', 'claw.yaml'), join(dir, 'claw.yaml'));
    writeFileSync(join(dir, 'claw.runtime.yaml'), b.text);
    return { at: b.at, ...(await claw(['validate', 'claw.yaml'], dir)) };
  });
  const failed = results.filter((r) => r.code !== 0).map((r) => `${r.at}: exit ${r.code}\n${r.stderr}`);
  assert.equal(failed, [], failed.join('\n'));
});

/** Code in a Markdown file: the lines of fenced blocks and every inline `code span`, with their line numbers. */
function codeOf(file: string): { line: number; code: string }[] {
  const out: { line: number; code: string }[] = [];
  let fenced = false;
  readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
    if (/^\s*```/.test(text)) fenced = !fenced;
    else if (fenced) out.push({ line: i + 1, code: text });
    else for (const m of text.matchAll(/`([^`]+)`/g)) out.push({ line: i + 1, code: m[1] });
  });
  return out;
}

test('every `claw <command> --flag` in the docs is a command and a flag of dist/claw.mjs', async () => {
  const top = await claw(['--help']);
  assert.is(top.code, 0, top.stderr);
  const commands = new Set([...top.stdout.matchAll(/^ {2}([a-z0-9]+)\b/gm)].map((m) => m[1]));
  assert.ok(commands.has('run') && commands.has('validate'), top.stdout);
  const helps = new Map<string, Promise<string>>();
  const helpOf = (cmd: string) => {
    if (!helps.has(cmd)) helps.set(cmd, claw([...cmd.split(' '), '--help']).then((r) => r.stdout + r.stderr));
    return helps.get(cmd)!;
  };
  const wrong: string[] = [];
  let seen = 0;
  for (const file of MARKDOWN) {
    for (const { line, code } of codeOf(file)) {
      // `claw run …`, `./dist/claw.mjs chat …`; up to the next shell operator.
      for (const m of code.matchAll(/(?:^|[\s'"(=/])claw(?:\.mjs)?\s+([a-z][a-z0-9-]*)(?:\s+(check|verify|card|send)\b)?([^|;&]*)/g)) {
        const where = `${relative(ROOT, file)}:${line}`;
        if (!commands.has(m[1])) {
          // Prose in code (`src/cli: the claw commands`, `dist/claw.mjs   the loader`) has no `claw <word> ` with
          // arguments after it; a command line does.
          if (code.includes(`claw ${m[1]} `)) wrong.push(`${where}: no command "${m[1]}": ${code}`);
          continue;
        }
        const cmd = m[2] && ['protocol', 'audit', 'a2a'].includes(m[1]) ? `${m[1]} ${m[2]}` : m[1];
        const help = await helpOf(cmd);
        for (const f of m[3].matchAll(/(?:^|\s)(--[a-z][a-z0-9-]*)/g)) {
          seen++;
          if (f[1] !== '--help' && !help.includes(f[1])) wrong.push(`${where}: claw ${cmd} has no ${f[1]}: ${code}`);
        }
      }
    }
  }
  assert.ok(seen > 30, `checked ${seen} flags`);
  assert.equal(wrong, [], wrong.join('\n'));
});

test('the dist/ sizes README.md quotes are within 3% of the build', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ');
  const quoted = (re: RegExp) => {
    const m = re.exec(readme);
    assert.ok(m, `README.md no longer says ${re}`);
    return Number(m![1]) * 1024;
  };
  const dist = join(ROOT, 'dist');
  const chunks = readdirSync(join(dist, 'chunks')).sort();
  const js = [readFileSync(join(dist, 'claw.mjs')), ...chunks.map((f) => readFileSync(join(dist, 'chunks', f)))];
  const wasm = readFileSync(join(dist, 'sql-wasm.wasm'));
  const entry = chunks.filter((f) => /^claw-[0-9a-f]+\.js$/.test(f));
  assert.is(entry.length, 1, `one start-up chunk file claw-<hash>.js in dist/chunks: ${entry}`);
  const measured = {
    js: js.reduce((n, b) => n + b.length, 0),
    startup: js[0].length + readFileSync(join(dist, 'chunks', entry[0])).length,
    gzip: gzipSync(Buffer.concat([...js, wasm]), { level: 9 }).length,
  };
  const said = {
    js: quoted(/JavaScript chunk files \((\d+) KB with everything/),
    startup: quoted(/a start reads and compiles (\d+) KB/),
    gzip: quoted(/(\d+) KB to download \(gzip\)/),
  };
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  for (const k of ['js', 'startup', 'gzip'] as const) {
    assert.ok(Math.abs(said[k] - measured[k]) <= 0.03 * measured[k], `README.md says ${kb(said[k])} for ${k}, dist/ has ${kb(measured[k])}: update README.md "What works today"`);
  }
});

test('docs/boards.md: a multi-file agent (examples/home-agent) installed as it says validates in the installed tree', async () => {
  const boards = readFileSync(join(ROOT, 'docs', 'boards.md'), 'utf8');
  const m = /An agent of several files[\s\S]*?```sh\n([\s\S]*?)^```/m.exec(boards);
  assert.ok(m, 'docs/boards.md "systemd" shows how to install an agent of several files');
  const root = mkdtempSync(join(tmpdir(), 'claw-boards-'));
  dirs.push(root);
  // The agent as a user's working copy has it: with state from a run beside it, which must not be installed.
  const agent = join(root, 'agent');
  cpSync(join(ROOT, 'examples', 'home-agent'), agent, { recursive: true });
  mkdirSync(join(agent, '.claw-data'));
  writeFileSync(join(agent, '.claw-data', 'memory.db'), 'state');
  // The block as written, into a tree instead of / (DESTDIR, which install.sh supports) and without sudo.
  const script = m![1]
    .replace(/\bexamples\/home-agent\b/g, agent)
    .replace(/\bsudo /g, '')
    .replace(/(^|[\s'|])\/etc\/claw/g, `$1${root}/etc/claw`)
    .replace(/\bsh targets\/systemd\/install\.sh/g, `DESTDIR=${root} sh targets/systemd/install.sh`);
  const run = await new Promise<{ code: number; out: string }>((resolve) => {
    execFile('sh', ['-ec', script], { cwd: ROOT, timeout: 30_000 }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: stdout + stderr }));
  });
  assert.is(run.code, 0, `${script}\n${run.out}`);
  const runtime = readFileSync(join(root, 'etc', 'claw', 'claw.runtime.yaml'), 'utf8');
  assert.match(runtime, /^data_dir: \/var\/lib\/claw$/m);
  // The agent's own settings came along (its channels), its state did not.
  assert.match(runtime, /^channels:$/m);
  assert.not.ok(existsSync(join(root, 'etc', 'claw', '.claw-data')));
  const v = await claw(['validate', join(root, 'etc', 'claw', 'claw.yaml'), '--strict']);
  assert.is(v.code, 0, v.stderr);
});

test.run();
