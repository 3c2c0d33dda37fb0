#!/usr/bin/env node
// Builds two start-up floors from a claw bundle, for `node scripts/bench.mjs --claw=<floor>`
// (BENCH.md "Round 3: cold start and RSS"):
//   floor-builtins.mjs  scripts/bench/bare.mjs + the node: built-ins the bundle imports at its top
//   floor-never.mjs     the same + the whole bundle inside a function that is never called: Node
//                       reads and pre-parses every byte of it, but no line of claw runs
// Usage: node scripts/bench/floor.mjs [--claw=dist/claw.mjs] [--out=DIR]   (prints the two paths)
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const root = new URL('../..', import.meta.url).pathname;
const claw = resolve(arg('claw', join(root, 'dist', 'claw.mjs')));
const out = arg('out') ? resolve(arg('out')) : mkdtempSync(join(tmpdir(), 'claw-floor-'));
mkdirSync(out, { recursive: true });

let src = readFileSync(claw, 'utf8').replace(/^#!.*\n/, '');
const builtins = new Set();
// Top-level ESM imports of node: built-ins become statements of the floor; inside a function they
// would be syntax errors, and the floor must load exactly what the bundle loads.
src = src.replace(/import\s*(\{[^}]*\}|\*\s*as\s*[\w$]+|[\w$]+)\s*from\s*["'](node:[^"']+)["']\s*;?/g, (_m, _what, mod) => {
  builtins.add(mod);
  return ';';
});
src = src.replace(/export\s*\{[^}]*\}\s*;?/g, ';');
const bare = readFileSync(join(root, 'scripts', 'bench', 'bare.mjs'), 'utf8').replace(/^#!.*\n/, '');
const imports = [...builtins].map((m) => `import ${JSON.stringify(m)};`).join('\n');
writeFileSync(join(out, 'never-blob.mjs'), `export function never() {${src}\n}\n`);
writeFileSync(join(out, 'floor-builtins.mjs'), `${imports}\n${bare}`);
writeFileSync(join(out, 'floor-never.mjs'), `${imports}\nimport { never } from './never-blob.mjs';\n${bare}`);
// A floor that does not parse would measure nothing: check both now.
for (const f of ['floor-builtins.mjs', 'floor-never.mjs', 'never-blob.mjs']) execFileSync(process.execPath, ['--check', join(out, f)]);
process.stderr.write(`floor: ${claw} (${src.length} chars), built-ins: ${[...builtins].join(' ')}\n`);
console.log(join(out, 'floor-builtins.mjs'));
console.log(join(out, 'floor-never.mjs'));
