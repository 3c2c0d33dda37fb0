// "Cold code" build (docs/size-budget.md, BENCH.md "Bundle: cold code"): one output file, in which the modules
// reachable only through a dynamic import() are stored brotli + base64 and evaluated on first use.
// Why: V8 must at least pre-parse every function in a script, so code that never runs before the first reply
// still costs start-up time, and a compressed string literal is both smaller and nearly free to scan.
//
// Shape of the output:
// - hot part: the usual ESM bundle, except that each import() of a cold module in a hot file is rewritten to
//   __claw_cold(group, id) (scripts/build/cold-hub.mjs), which decompresses and evaluates that group once;
// - each cold group: a CommonJS bundle whose entry maps ids to `() => import(...)` (esbuild turns those into
//   lazy module initialisers, so a cold module's top level still runs at the time of the original import());
//   its imports of hot modules resolve to `require("claw-hot:N")`, answered from a registry of the hot bundle's
//   own module namespaces (one copy of every module: ProtocolError instanceof holds across the boundary);
//   `import.meta.url` is the hot bundle's URL (sql.js finds sql-wasm.wasm beside the bundle).
import { build, transform } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';
import { relative, resolve as resolvePath } from 'node:path';
import { createRequire } from 'node:module';
import { analyse, splitGraph } from './cold-graph.mjs';

const TSCONFIG = readFileSync('tsconfig.json', 'utf8');
const HUB = readFileSync(new URL('./cold-hub.mjs', import.meta.url), 'utf8');
const key = (abs) => relative(process.cwd(), abs).split('\\').join('/');
const esc = (s) => JSON.stringify(s);

/** Exported names of a package module that cold sources read through `import * as ns` (checked, not guessed). */
async function usedPackageNames(pkgKey, coldFiles, inputs) {
  const spec = [];
  const names = new Set();
  for (const f of coldFiles) {
    if (!inputs[f].imports.some((i) => i.path === pkgKey)) continue;
    const src = readFileSync(f, 'utf8');
    const imp = [...src.matchAll(/^import\s+(.+?)\s+from\s+['"]([^'"]+)['"]/gm)].filter((m) => !m[2].startsWith('.'));
    for (const m of imp) {
      const ns = /^\*\s+as\s+(\w+)$/.exec(m[1]);
      if (!ns) throw new Error(`cold build: ${f} imports ${m[2]} as "${m[1]}"; only \`import * as ns\` of a hot package is supported`);
      for (const u of src.matchAll(new RegExp(`\\b${ns[1]}\\.(\\w+)`, 'g'))) names.add(u[1]);
      spec.push(m[2]);
    }
  }
  const real = new Set(Object.keys(await import(createRequire(resolvePath('package.json')).resolve(pkgKey.startsWith('node_modules/') ? resolvePath(pkgKey) : pkgKey))));
  return [...names].filter((n) => real.has(n)).sort();
}

/**
 * `externalPayloads`: the hot code reads each group through a function `__claw_payload(g)` its host provides
 * (the code-cache build, scripts/build/boot.mjs, keeps the payloads outside the compiled script) instead of an
 * inline array. With `base.write === false` nothing is written and the result carries `hotCode` and `payloads`.
 */
export async function bundleCold(base, { entry, outfile, externalPayloads = false }) {
  const entryKey = key(resolvePath(entry));
  const { inputs } = await analyse({ ...base, entryPoints: [entry] });
  const { hot, edges, groups } = splitGraph(inputs, entryKey);
  const hotIndex = new Map(); // metafile key of a hot module the cold code needs -> registry slot
  const slot = (k) => (hotIndex.has(k) ? hotIndex.get(k) : (hotIndex.set(k, hotIndex.size), hotIndex.size - 1));

  // 1. Cold groups, each one CommonJS bundle.
  const payloads = [];
  const groupInfo = [];
  for (const [g, group] of groups.entries()) {
    const coldPlugin = {
      name: 'claw-cold-split',
      setup(b) {
        b.onResolve({ filter: /^cold-entry$/ }, () => ({ path: 'cold-entry', namespace: 'claw-entry' }));
        b.onResolve({ filter: /.*/ }, async (args) => {
          if (args.pluginData?.inner) return undefined;
          if (args.namespace === 'claw-shim') return { path: args.path, external: true };
          const r = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: { inner: true } });
          if (r.errors.length) return { errors: r.errors };
          if (r.external) {
            // import() of a node built-in inside cold code: a CommonJS wrapper, so the module namespace
            // comes from the real require (an import() inside evaluated code has no module referrer).
            if (args.kind === 'dynamic-import') return { path: r.path, namespace: 'claw-shim', pluginData: { require: r.path } };
            return r;
          }
          const k = key(r.path);
          if (!hot.has(k)) return { path: r.path, namespace: r.namespace, sideEffects: r.sideEffects, pluginData: r.pluginData };
          const id = `claw-hot:${slot(k)}`;
          if (args.kind === 'dynamic-import') return { path: id, namespace: 'claw-shim', pluginData: { require: id } };
          return { path: id, external: true };
        });
        b.onLoad({ filter: /.*/, namespace: 'claw-shim' }, (args) => ({ contents: `module.exports = require(${esc(args.pluginData.require)});`, loader: 'js' }));
        b.onLoad({ filter: /.*/, namespace: 'claw-entry' }, () => ({
          contents: `module.exports = {${group.targets.map((t) => `${esc(t)}: () => import(${esc(resolvePath(t))})`).join(',')}};`,
          loader: 'js',
          resolveDir: process.cwd(),
        }));
      },
    };
    const r = await build({
      ...base,
      entryPoints: ['cold-entry'],
      format: 'cjs',
      banner: undefined,
      write: false,
      metafile: true,
      outfile: `cold-${g}.cjs`,
      // The hot bundle's URL, passed in by the hub (sql.js's wasm lives beside it).
      define: { ...base.define, 'import.meta.url': '__claw_url' },
      plugins: [coldPlugin],
    });
    // esbuild replaces other import.meta uses by {} in CommonJS output (a warning): refuse instead.
    const meta = r.warnings.find((w) => /import\.meta/.test(w.text));
    if (meta) throw new Error(`cold build: ${meta.location?.file}: ${meta.text} (only import.meta.url is passed to cold code)`);
    const code = r.outputFiles[0].text;
    // CLAW_COLD_DEBUG=1: keep each group's source in clear beside the output, to read or measure it.
    if (process.env.CLAW_COLD_DEBUG) writeFileSync(`${outfile}.group-${g}.cjs`, code);
    // import() inside evaluated code works on Node 18/20/22 and Bun for built-ins and bare names (native.ts's
    // bun:sqlite / node:sqlite probe), but a relative or hot-module specifier would resolve against no module.
    if (/\bimport\(\s*["'`](\.|\/|claw-hot:|file:)/.test(code)) throw new Error(`cold build: group ${g} contains a relative import()`);
    // Brotli rather than deflate-raw: 11% smaller on these groups (75 vs 84 KB), +0.3 ms to decompress the
    // largest; node:zlib has it on Node 18/20/22 and Bun (BENCH.md "Bundle: cold code").
    const input = Buffer.from(code);
    const packed = brotliCompressSync(input, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: input.length } });
    payloads.push(packed.toString('base64'));
    const out = Object.values(r.metafile.outputs)[0];
    groupInfo.push({ group: g, targets: group.targets, modules: group.modules.size, raw: input.length, compressed: packed.length, base64: payloads[g].length, inputs: out.inputs });
  }

  // 2. Registry entries: namespaces of the hot modules cold code imports. Packages (valibot) get a proxy module
  // re-exporting only the names cold code reads, so a namespace import does not defeat tree shaking.
  const coldFiles = groups.flatMap((gr) => [...gr.modules]).filter((f) => !f.startsWith('node_modules/'));
  const registry = [];
  for (const [k, i] of hotIndex) {
    if (k.startsWith('node_modules/')) {
      const names = await usedPackageNames(k, coldFiles, inputs);
      registry[i] = { key: k, proxy: `export { ${names.join(', ')} } from ${esc(resolvePath(k))};` };
    } else registry[i] = { key: k };
  }

  // 3. The hot bundle.
  const edgesByFile = new Map();
  for (const e of edges) {
    const g = groups.findIndex((gr) => gr.targets.includes(e.target));
    (edgesByFile.get(e.from) ?? edgesByFile.set(e.from, []).get(e.from)).push({ ...e, group: g });
  }
  const hotPlugin = {
    name: 'claw-cold-hot',
    setup(b) {
      b.onResolve({ filter: /^claw-cold:/ }, (args) => ({ path: args.path, namespace: 'claw-cold' }));
      // The real entry runs for its effects ("sideEffects": false in package.json would drop a bare import).
      b.onResolve({ filter: /.*/, namespace: 'claw-cold' }, (args) => (args.path === resolvePath(entry) ? { path: args.path, sideEffects: true } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'claw-cold' }, (args) => {
        if (args.path === 'claw-cold:entry') {
          const lines = [`import ${esc(resolvePath(entry))};`];
          registry.forEach((r, i) => lines.push(`import * as h${i} from ${esc(r.proxy ? `claw-cold:proxy:${i}` : resolvePath(r.key))};`));
          lines.push(`import { __claw_register } from 'claw-cold:hub';`, `__claw_register([${registry.map((_, i) => `h${i}`).join(',')}]);`);
          return { contents: lines.join('\n'), loader: 'js', resolveDir: process.cwd() };
        }
        if (args.path === 'claw-cold:hub') {
          const hub = HUB.replace('__CLAW_COLD_PAYLOADS__', externalPayloads ? '__claw_payload' : JSON.stringify(payloads)).replace(
            '__CLAW_HUB_REQUIRE__',
            externalPayloads ? 'const hubRequire = () => require;' : "import { createRequire } from 'node:module';\nconst hubRequire = () => createRequire(import.meta.url);",
          );
          return { contents: hub, loader: 'js', resolveDir: process.cwd() };
        }
        const p = /^claw-cold:proxy:(\d+)$/.exec(args.path);
        if (p) return { contents: registry[+p[1]].proxy, loader: 'js', resolveDir: process.cwd() };
        return { errors: [{ text: `unknown ${args.path}` }] };
      });
      const files = [...edgesByFile.keys()];
      if (!files.length) return;
      b.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
        const list = edgesByFile.get(key(args.path));
        if (!list) return undefined;
        // TypeScript first (same tsconfig as the build): an `import('./x.ts').T` type must not be rewritten.
        const ts = /\.[cm]?ts$/.test(args.path);
        let src = readFileSync(args.path, 'utf8');
        if (ts) src = (await transform(src, { loader: 'ts', sourcefile: args.path, tsconfigRaw: TSCONFIG, target: 'esnext' })).code;
        for (const e of list) {
          const re = new RegExp(`\\bimport\\(\\s*(['"])${e.spec.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\1\\s*\\)`, 'g');
          let n = 0;
          src = src.replace(re, () => (n++, `__claw_cold(${e.group}, ${esc(e.target)})`));
          if (!n) throw new Error(`cold build: import('${e.spec}') not found in ${e.from}`);
        }
        src += `\nimport { __claw_cold } from 'claw-cold:hub';\n`;
        return { contents: src, loader: 'js' };
      });
    },
  };
  const r = await build({ ...base, entryPoints: ['claw-cold:entry'], outfile, metafile: true, plugins: [hotPlugin] });
  const hotOut = Object.values(r.metafile.outputs)[0];
  const payloadBytes = payloads.reduce((s, p) => s + p.length, 0);
  const hotCode = r.outputFiles?.[0]?.text;
  return {
    groups: groupInfo,
    registry: registry.map((x) => x.key),
    hotInputs: hotOut.inputs,
    hotBytes: externalPayloads ? hotOut.bytes : hotOut.bytes - payloadBytes,
    payloadBytes,
    ...(hotCode !== undefined ? { hotCode, payloads } : {}),
  };
}
