// The runtime as chunk files (docs/startup.md). esbuild bundles targets/node.ts with code splitting: every
// import() target (a capability group: tools, memory, swarm, the agent loop, channels, MQTT, sql.js glue,
// telemetry, each command but run/validate) becomes a chunk, and code several of them share a shared chunk.
// esbuild then turns each chunk into CommonJS itself (`import` -> `require`, `import()` -> a promise of a
// `require`), and chunks that are always loaded together are written to one file:
//   - everything the entry needs through static imports: one file, loaded at every start;
//   - every other chunk grouped with the chunks that are needed by exactly the same import() targets.
// A file is one object literal of functions, one per chunk, in the form the loader calls them:
//
//   ({"tools-module-X.js": function (require, module, exports, __claw_url) { "use strict"; <chunk> }, ...})
//
// The loader (targets/boot.ts) compiles a file with vm.Script and a V8 code cache when one of its chunks is
// first required. Nothing here edits code text: the splitting and the module-format conversion are esbuild's.
import { build, transform } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/**
 * Bundles `entry` into `outdir` (emptied first). `base`: the shared esbuild options (minify, target, define,
 * alias...). Returns the entry chunk's name, the file holding each chunk, and each file's size, chunks and inputs
 * (esbuild's metafile: bytes each source module contributes).
 */
export async function buildChunks(base, { entry, outdir }) {
  const split = await build({
    ...base,
    entryPoints: { claw: entry },
    bundle: true,
    splitting: true,
    format: 'esm',
    outdir,
    write: false,
    metafile: true,
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    // The chunks run inside a function whose parameter is the loader's URL (sql.js finds its wasm beside it).
    define: { ...base.define, 'import.meta.url': '__claw_url' },
  });
  const outputs = new Map(Object.entries(split.metafile.outputs).map(([k, meta]) => [basename(k), meta]));
  const text = new Map(split.outputFiles.map((f) => [basename(f.path), f.text]));
  const main = [...outputs].find(([name, meta]) => meta.entryPoint && name.startsWith('claw-'))?.[0];
  if (!main) throw new Error('chunk build: no entry chunk');
  const staticClosure = (from) => {
    const seen = new Set();
    const stack = [from];
    while (stack.length) {
      const c = stack.pop();
      if (seen.has(c)) continue;
      seen.add(c);
      for (const i of outputs.get(c).imports) if (i.kind === 'import-statement' && !i.external) stack.push(basename(i.path));
    }
    return seen;
  };
  const hot = staticClosure(main);
  // Which import() targets need each chunk: chunks with the same answer are always loaded together.
  const neededBy = new Map();
  for (const [name, meta] of outputs) {
    if (!meta.entryPoint || hot.has(name)) continue;
    for (const c of staticClosure(name)) if (!hot.has(c)) neededBy.set(c, [...(neededBy.get(c) ?? []), name]);
  }
  const groups = new Map([['hot', [...hot]]]);
  for (const [c, targets] of neededBy) {
    const key = targets.sort().join(' ');
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }

  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const fileOf = {};
  const files = [];
  for (const [key, chunks] of groups) {
    chunks.sort((a, b) => (a === main ? -1 : b === main ? 1 : a < b ? -1 : 1));
    const members = [];
    for (const c of chunks) {
      const cjs = await transform(text.get(c), {
        format: 'cjs',
        // import() of another chunk or a built-in becomes Promise.resolve().then(() => require(...)): a
        // vm.Script has no module to resolve an import() against, and none is left for one.
        supported: { 'dynamic-import': false },
        target: base.target,
        minify: base.minify ?? false,
        logLevel: 'error',
      });
      // esbuild would turn a read of import.meta beyond .url (defined above) into {}: refuse to ship that.
      const meta = cjs.warnings.find((w) => w.text.includes('import.meta'));
      if (meta) throw new Error(`chunk build: ${c} reads import.meta (${meta.text})`);
      members.push(`${JSON.stringify(c)}:function(require,module,exports,__claw_url){"use strict";${cjs.code}\n}`);
    }
    const body = `({${members.join(',\n')}})\n`;
    const label = key === 'hot' ? 'claw' : chunks.find((c) => outputs.get(c).entryPoint)?.replace(/-[A-Z0-9]+\.js$/, '') ?? 'shared';
    const file = `${label}-${createHash('sha256').update(body).digest('hex').slice(0, 8)}.js`;
    writeFileSync(join(outdir, file), body);
    for (const c of chunks) fileOf[c] = file;
    const inputs = Object.assign({}, ...chunks.map((c) => outputs.get(c).inputs));
    files.push({ file, bytes: Buffer.byteLength(body), chunks, inputs });
  }
  return { entry: main, fileOf, files };
}
