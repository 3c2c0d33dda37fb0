// dist/claw.mjs: the loader of the runtime's chunks (docs/startup.md). The runtime itself is in dist/chunks/
// (scripts/build/chunks.mjs): each file an object of functions `(require, module, exports, __claw_url)`, one
// per chunk, the chunks that are always needed together. A file is read and compiled when one of its chunks is
// first required: the start-up file now, a capability group (tools, memory, MQTT, ...) when a session first
// needs it. Each file is compiled with vm.Script, which takes a V8 code cache (an ES module cannot on Node 18/20),
// so on the next start V8 reuses the bytecode instead of parsing and compiling again (src/node/code-cache.ts).
// vm.Script compiles the file's text like any script file: it is not eval, and works under
// --disallow-code-generation-from-strings.
import { CACHE_V8_FLAGS, cacheCommand, cacheDir, cacheFileName, cacheWriter, readCache } from '../src/node/code-cache.ts';
import { builtin, hasBuiltins, useRequire } from '../src/node/builtin.ts';
import { machineWasmTier, v8FlagsFor } from '../src/node/wasm-tier.ts';

/** Set by build.config.mjs: the entry chunk, the file holding each chunk, and their directory beside this file. */
declare const __CLAW_ENTRY__: string;
declare const __CLAW_FILES__: Record<string, string>;
declare const __CLAW_CHUNK_DIR__: string;

type Chunk = (require: NodeRequire, module: { exports: unknown }, exports: unknown, url: string) => void;

const url = import.meta.url;
if (!hasBuiltins()) useRequire((await import('node:module')).createRequire(url));
const fs = builtin('node:fs');
const { Script } = builtin('node:vm');
const chunkDir = builtin('node:url').fileURLToPath(new URL(`${__CLAW_CHUNK_DIR__}/`, url));

// Bun keeps its own cache of compiled code and ignores V8 cached data: no files there.
const command = process.versions.bun ? undefined : cacheCommand(process.argv);
const cache = command ? cacheDir(process.env) : undefined;

// V8 flags, set before anything is compiled, as V8 stamps its flags into every code cache: the compiler tier of
// sql.js's WebAssembly, from the memory budget (src/node/wasm-tier.ts), and the code caches' checksum where
// caches are used (src/node/code-cache.ts). Bun runs JavaScriptCore: nothing to set.
if (!process.versions.bun) {
  const wasm = v8FlagsFor(machineWasmTier({ env: process.env, readText: (p) => readOptional(p), totalmem: () => builtin('node:os').totalmem() }).tier);
  const flags = [wasm, cache ? CACHE_V8_FLAGS : undefined].filter(Boolean).join(' ');
  if (flags) builtin('node:v8').setFlagsFromString(flags);
}

function readOptional(path: string): string | undefined {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

const saveLater = cache ? cacheWriter(cache) : undefined;
const flags = `${process.execArgv.join('\0')}\0${process.env.NODE_OPTIONS ?? ''}`;

const modules = new Map<string, { exports: unknown }>();
const chunks = new Map<string, Chunk>();
const builtinRequire = nodeRequire();

/** Reads and compiles a chunk file (with its V8 code cache when there is a usable one), then knows its chunks. */
function loadFile(file: string): void {
  const filename = chunkDir + file;
  const source = fs.readFileSync(filename, 'utf8');
  const name = cache && cacheFileName({ chunk: file.replace(/\.js$/, ''), command: command!, nodeVersion: process.version, arch: process.arch, flags });
  const cachedData = name ? readCache(`${cache}/${name}`) : undefined;
  const script = new Script(source, { filename, ...(cachedData ? { cachedData } : {}) });
  if (name && (!cachedData || script.cachedDataRejected)) saveLater!(name, () => script.createCachedData());
  for (const [id, fn] of Object.entries(script.runInThisContext() as Record<string, Chunk>)) chunks.set(id, fn);
}

/** A chunk's exports, running it first if this is the first require (as CommonJS: registered before it runs). */
function requireChunk(id: string): unknown {
  const known = modules.get(id);
  if (known) return known.exports;
  if (!chunks.has(id) && Object.hasOwn(__CLAW_FILES__, id)) loadFile(__CLAW_FILES__[id]);
  const run = chunks.get(id);
  if (!run) throw new Error(`claw: no chunk ${id} in ${chunkDir} (a partial install?)`);
  const module = { exports: {} as unknown };
  modules.set(id, module);
  run(chunkRequire as NodeRequire, module, module.exports, url);
  return module.exports;
}

/** What a chunk's `require` answers: another chunk (`./name.js`, written by the build), else Node's require. */
function chunkRequire(id: string): unknown {
  return id.startsWith('./') ? requireChunk(id.slice(2)) : builtinRequire(id);
}
Object.defineProperty(chunkRequire, 'resolve', { get: () => builtinRequire.resolve });
Object.defineProperty(chunkRequire, 'cache', { get: () => builtinRequire.cache });

/**
 * Node's require for built-ins and packages: built-ins through process.getBuiltinModule (Node >= 20.16, Bun),
 * which needs no node:module (~0.8 ms with createRequire); anything else, and .resolve / .cache, through a
 * real require rooted at this file, made on first use.
 */
function nodeRequire(): NodeRequire {
  const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  let full: NodeRequire | undefined;
  const real = () => (full ??= builtin('node:module').createRequire(url));
  if (typeof get !== 'function') return real();
  const req = ((id: string) => get.call(process, id) ?? real()(id)) as NodeRequire;
  Object.defineProperty(req, 'resolve', { get: () => real().resolve });
  Object.defineProperty(req, 'cache', { get: () => real().cache });
  return req;
}

requireChunk(__CLAW_ENTRY__);
