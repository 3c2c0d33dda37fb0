#!/usr/bin/env node
// The import direction as a checked rule (README "Layout", docs/testing.md "Layers"). Reads the relative
// import / export-from / import() specifiers of src/**/*.ts and targets/*.ts, maps every file to a layer
// and fails when
//   - a file imports a layer its own layer may not import (ALLOWED), unless EXCEPTIONS names the edge, or
//   - static value imports form a cycle between files (evaluation order would then depend on which file
//     is imported first; type-only imports and import() are erased or deferred, so they do not count), or
//   - code outside the host (ENV_READERS) reads `process.env`: the host passes the environment on, so a
//     secret never comes from a variable the runtime configuration turned off (runtime profile §7).
// Usage: node scripts/check-layers.mjs   (prints one line per violation, exits 1 if there is any)
//
// A scanner rather than a parser: an import statement starts a line (`import` / `export`, then only
// names, braces, commas and `*` before `from`), so code inside comments and strings is not read as one.
// Package imports are not layers and are not checked.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Layers, bottom first. A path maps to the longest prefix that names it; a folder that holds two layers
 * names the odd file explicitly.
 */
export const LAYERS = {
  protocol: ['src/protocol/'],
  // Self-contained engines: each imports only the protocol's error types.
  yaml: ['src/yaml/'],
  regex: ['src/regex/'],
  log: ['src/log/redactor.ts', 'src/log/iso-time.ts', 'src/log/line-window.ts'],
  manifest: ['src/manifest/'],
  kernel: ['src/kernel/'],
  // The host's bindings for the kernel's ports: lazy builtins, clock, file reader, ledger file, logger.
  host: ['src/node/', 'src/log/logger.ts'],
  // The network guard every outbound request goes through (allowlist, SSRF, DNS pinning): every adapter uses it.
  net: ['src/net/'],
  policy: ['src/policy/'],
  gates: ['src/gates/'],
  sandbox: ['src/sandbox/'],
  tools: ['src/tools/'],
  memory: ['src/memory/'],
  transports: ['src/transports/'],
  swarm: ['src/swarm/'],
  a2a: ['src/a2a/'],
  provider: ['src/provider/'],
  agent: ['src/agent/'],
  femtoclaw: ['src/femtoclaw/'],
  channels: ['src/channels/'],
  audit: ['src/audit/'],
  telemetry: ['src/telemetry/'],
  // The runtime configuration file's schema, composed from the adapters' own config schemas.
  config: ['src/config/'],
  runtime: ['src/runtime/'],
  cli: ['src/cli/'],
  targets: ['targets/'],
};

const CORE = ['protocol', 'yaml', 'regex', 'log', 'manifest', 'kernel', 'host', 'net'];
const DECISIONS = ['policy', 'gates'];
export const ADAPTERS = ['sandbox', 'tools', 'memory', 'transports', 'swarm', 'a2a', 'provider', 'agent', 'femtoclaw', 'channels', 'audit', 'telemetry'];

/** Which layers each layer may import (besides itself). Adapters do not import each other: see EXCEPTIONS. */
export const ALLOWED = {
  protocol: [],
  yaml: ['protocol'],
  regex: ['protocol'],
  log: ['protocol'],
  manifest: ['protocol', 'yaml', 'regex'],
  kernel: ['protocol', 'yaml', 'regex', 'log', 'manifest'],
  host: ['protocol', 'yaml', 'regex', 'log', 'manifest', 'kernel'],
  net: ['protocol', 'host'],
  policy: CORE,
  gates: [...CORE, 'policy'],
  ...Object.fromEntries(ADAPTERS.map((a) => [a, [...CORE, ...DECISIONS]])),
  config: [...CORE, ...DECISIONS, ...ADAPTERS],
  runtime: [...CORE, ...DECISIONS, ...ADAPTERS, 'config'],
  cli: [...CORE, ...DECISIONS, ...ADAPTERS, 'config', 'runtime'],
  targets: [...CORE, ...DECISIONS, ...ADAPTERS, 'config', 'runtime', 'cli'],
};

/**
 * Edges the layers above forbid but the code has today, each allowed by path prefix (from → to) with the
 * reason.
 */
export const EXCEPTIONS = [
  // The tool contract and the JSON Schema validator live in src/tools, the sandbox spec readers in src/sandbox;
  // the gate path, FemtoClaw and the secret scan need them. Their place is a layer down (the contract a kernel
  // port, the validator beside src/regex, the spec readers beside the manifest's sandbox schema): a move of
  // whole files that every adapter imports, left for a change of its own.
  { from: 'src/gates/', to: 'src/tools/types.ts', why: 'the gates run a tool through its contract (ToolImpl, ToolResult, SandboxViolation)' },
  { from: 'src/gates/', to: 'src/tools/json-schema.ts', why: 'type-only: the schema gate runs the ArgumentCheck the registry compiled' },
  { from: 'src/policy/secret-scan.ts', to: 'src/tools/types.ts', why: 'type-only: the scan reads a ToolResult' },
  { from: 'src/femtoclaw/', to: 'src/tools/json-schema.ts', why: 'step 5 (§8) checks arguments with the one JSON Schema validator' },
  { from: 'src/gates/', to: 'src/sandbox/spec-view.ts', why: 'a context.sandbox override is narrowed (§9.3.2) by reading the spec as the sandbox does' },
  { from: 'src/gates/', to: 'src/sandbox/shell-rules.ts', why: 'the sandbox gate checks a shell command by the rules the sandbox enforces' },
  // Adapter → adapter.
  { from: 'src/tools/', to: 'src/sandbox/', why: 'tools run through the sandbox: its runner, safe open, and the capabilities a spec grants' },
  { from: 'src/agent/', to: 'src/femtoclaw/', why: 'the agent loop validates every model output with FemtoClaw (§10) and asks it for the correction' },
  { from: 'src/agent/', to: 'src/tools/', why: 'the agent loop calls tools through their contract and checks arguments' },
  { from: 'src/channels/', to: 'src/transports/', why: 'queue channels reuse the fs and MQTT transports (connection, envelope, dedup)' },
  { from: 'src/channels/', to: 'src/agent/', why: 'a channel turn is an agent turn' },
  { from: 'src/swarm/', to: 'src/transports/', why: 'the fs and MQTT buses are the fs and MQTT transports' },
  { from: 'src/audit/', to: 'src/memory/sqlite/', why: 'the sqlite audit destination uses the one SQLite adapter' },
  { from: 'src/telemetry/', to: 'src/memory/sqlite/', why: 'the sqlite exporter uses the one SQLite adapter' },
  { from: 'src/audit/gate-audit.ts', to: 'src/tools/types.ts', why: 'type-only: records a ToolResult' },
  { from: 'src/agent/', to: 'src/provider/output-mode.ts', why: 'the output modes the agent offers a provider (shared types that belong a layer down)' },
  { from: 'src/tools/builtins/mqtt-', to: 'src/transports/mqtt/', why: 'the MQTT builtins use the MQTT transport\'s connection and settings' },
  { from: 'src/tools/builtins/mqtt-port.ts', to: 'src/channels/queue-mqtt.ts', why: 'the MQTT channel\'s broker URL parser, so a builtin and a channel read one URL the same way (belongs in src/transports/mqtt)' },
  { from: 'src/a2a/', to: 'src/transports/http/', why: 'the A2A endpoint and the AgentCard are routes of the HTTP listener (its route seam, body and reply helpers)' },
  { from: 'src/a2a/', to: 'src/channels/types.ts', why: 'an A2A caller is a user of a declared channel (profile §8): the channel access types' },
  { from: 'src/a2a/', to: 'src/channels/access.ts', why: 'an A2A caller passes the same access gate as every channel\'s user (allowlist, roles, pairing, rate)' },
  { from: 'src/a2a/open.ts', to: 'src/channels/pairing-store.ts', why: 'the A2A channel\'s pairings live where `claw pair` approves them' },
  // Adapters that read the runtime configuration's type (config sits above the adapters because its schema is
  // composed from theirs; the type of a block is the schema's).
  { from: 'src/tools/registry.ts', to: 'src/config/runtime-config.ts', why: 'type-only: the `tools:` bindings' },
  { from: 'src/transports/listen.ts', to: 'src/config/runtime-config.ts', why: 'type-only: the `transports:` entries' },
  { from: 'src/agent/composite.ts', to: 'src/config/runtime-config.ts', why: 'type-only: the `agent:` limits and the providers\' output modes of a sub-turn' },
  { from: 'src/a2a/', to: 'src/config/runtime-config.ts', why: 'the a2a block and the HTTP transport entries it serves on (move with the composition root)' },
];

/** Where `process.env` may be read: the host and the entry points that build it (src/runtime/host.ts). */
export const ENV_READERS = ['src/node/', 'src/runtime/host.ts', 'targets/'];

/** Files outside the host that read `process.env`, each with the reason. */
export const ENV_EXCEPTIONS = [
  {
    from: 'src/tools/builtins/shell-interpreter.ts',
    why: 'the shell builtin looks a program up on the PATH of the process it runs in: the sandboxed worker, whose environment the sandbox set',
  },
];

/** Whether code (not a comment line) in `text` reads process.env. */
export const readsProcessEnv = (text) => /^(?![ \t]*(?:\/\/|\*|\/\*)).*\bprocess\.env\b/m.test(text);

/** Every relative specifier of one file: { spec, typeOnly, dynamic }. */
export function scanImports(text) {
  const out = [];
  const stmt = /^[ \t]*(import|export)[ \t]+(type[ \t\n]+)?([\w$*\s,{}]*?)\s*from\s*['"]([^'"\n]+)['"]|^[ \t]*import\s*['"]([^'"\n]+)['"]/gm;
  for (const m of text.matchAll(stmt)) {
    const spec = m[4] ?? m[5];
    const names = (m[3] ?? '').trim();
    const allTyped = /^\{[\s\S]*\}$/.test(names) && names.slice(1, -1).split(',').map((s) => s.trim()).filter(Boolean).every((s) => /^type\s/.test(s));
    out.push({ spec, typeOnly: Boolean(m[2]) || (names !== '' && allTyped), dynamic: false });
  }
  for (const m of text.matchAll(/^(.*?)\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/gm)) {
    const before = m[1].trimStart();
    if (before.startsWith('//') || before.startsWith('*') || before.startsWith('/*')) continue;
    out.push({ spec: m[2], typeOnly: false, dynamic: true });
  }
  return out.filter((i) => i.spec.startsWith('.'));
}

export function layerOf(path, layers = LAYERS) {
  let best;
  let len = -1;
  for (const [layer, prefixes] of Object.entries(layers)) {
    for (const p of prefixes) if (path.startsWith(p) && p.length > len) [best, len] = [layer, p.length];
  }
  return best;
}

function walk(dir, recurse) {
  const out = [];
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (recurse) out.push(...walk(p, recurse));
    } else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** A cycle through `start` inside one strongly connected set, as a list of files ending where it began. */
function cycleThrough(start, members, edges) {
  const prev = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of edges.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [w];
        for (let x = v; x !== undefined; x = prev.get(x)) path.unshift(x);
        return path;
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** Strongly connected sets of more than one file (Tarjan). */
function stronglyConnected(edges) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const sets = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const set = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        set.push(w);
      } while (w !== v);
      if (set.length > 1) sets.push(set.sort());
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return sets;
}

/**
 * Checks the tree under `root` (or `files`, repo-relative, read with `read`). Returns the violations as
 * printable lines (empty when the layering holds) and the exceptions no import uses any more, so the table
 * shrinks as edges are fixed.
 */
export function checkLayers({
  root,
  layers = LAYERS,
  allowed = ALLOWED,
  exceptions = EXCEPTIONS,
  envExceptions = ENV_EXCEPTIONS,
  files = [...walk(join(root, 'src'), true), ...walk(join(root, 'targets'), false)].map((f) => relative(root, f).split(sep).join('/')),
  read = (file) => readFileSync(join(root, file), 'utf8'),
}) {
  files = [...files].sort();
  const problems = [];
  const used = new Set();
  const values = new Map();
  for (const file of files) {
    const from = layerOf(file, layers);
    if (!from) {
      problems.push(`${file}: in no layer (add its folder to LAYERS in scripts/check-layers.mjs)`);
      continue;
    }
    const deps = new Set();
    const text = read(file);
    if (!ENV_READERS.some((p) => file.startsWith(p)) && readsProcessEnv(text)) {
      const ex = envExceptions.find((e) => file.startsWith(e.from));
      if (ex) used.add(ex);
      else problems.push(`${file}: reads process.env (only the host does: take the environment from it)`);
    }
    for (const imp of scanImports(text)) {
      const target = relative(root, resolve(root, dirname(file), imp.spec)).split(sep).join('/');
      if (!imp.typeOnly && !imp.dynamic) deps.add(target);
      const to = layerOf(target, layers);
      if (to === from) continue;
      if (to === undefined) {
        problems.push(`${file} → ${imp.spec} (${from} → outside every layer)`);
        continue;
      }
      if ((allowed[from] ?? []).includes(to)) continue;
      const ex = exceptions.find((e) => file.startsWith(e.from) && target.startsWith(e.to));
      if (ex) {
        used.add(ex);
        continue;
      }
      problems.push(`${file} → ${imp.spec} (${from} → ${to})`);
    }
    values.set(file, [...deps]);
  }
  for (const set of stronglyConnected(values)) {
    problems.push(`cycle of value imports: ${cycleThrough(set[0], new Set(set), values).join(' → ')}`);
  }
  return { problems, unused: [...exceptions, ...envExceptions].filter((e) => !used.has(e)), files: files.length };
}

function main() {
  const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
  const { problems, unused, files } = checkLayers({ root });
  // A warning, not a failure: branches merge in any order, and an edge one of them removes may still be in another.
  for (const e of unused) console.error(`check-layers: warning: nothing uses the exception ${e.from}${e.to ? ` → ${e.to}` : ''}; remove it`);
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(`check-layers: ${problems.length} problem(s) against the layering (README "Layout", docs/testing.md "Layers")`);
    process.exit(1);
  }
  console.log(`check-layers: ${files} files, imports follow the layers`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
