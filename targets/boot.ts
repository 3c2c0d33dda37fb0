// Entry of dist/claw.mjs as the code-cache build ships it (docs/startup.md; scripts/build/boot.mjs assembles it).
// The file is this small ES module followed by one comment that holds the runtime's hot code (targets/node.ts,
// bundled as a function) and the compressed cold groups, as the body of a function declared after the loader.
// Node parses a comment almost for free; this loader takes the hot code from the engine's own copy of the file's
// text (that function's source text: no second read, no copy) and compiles it with vm.Script, handing V8 the code cache an earlier
// start of the same build left in the cache directory, so the functions start-up runs are not compiled again.
// Without a usable cache (first start, another Node or flags, Bun, CLAW_CODE_CACHE=0) it compiles normally and,
// on Node, leaves one for the next start (src/node/code-cache.ts).
import { cacheCommand, cacheDir, cacheFileName, readCache, saveLater } from '../src/node/code-cache.ts';
import { builtin, hasBuiltins, useRequire } from '../src/node/builtin.ts';

/** Written by scripts/build/boot.mjs: character offsets into this file (it is ASCII, so bytes are characters). */
declare const __CLAW_BOOT__: {
  /** Build id: a hash of the hot code and the payloads; also the first word after each marker in the file. */
  id: string;
  /** Offset of `function __CLAW_HOT__`: the start of that function's source text. */
  fn: number;
  /** Offsets of the id after the hot-code marker, of the hot code's start and end, and its line (0-based). */
  hot: [mark: number, start: number, end: number, line: number];
  /** Whether "*" + "/" was stored as "*" + NUL inside the comment (NUL never occurs in the code). */
  esc: boolean;
  /** Offset of the id after the cold marker; then [start, end) of each cold group's base64 text. */
  coldMark: number;
  cold: [start: number, end: number][];
};
/** Declared at the end of this file by scripts/build/boot.mjs: its body is the comment holding everything. */
declare function __CLAW_HOT__(): void;

const BOOT = __CLAW_BOOT__;
/** CLAW_STARTUP_TRACE=1: ms since the process started at each step, on stderr at the first reply (docs/startup.md). */
const trace: [string, number][] | undefined = process.env.CLAW_STARTUP_TRACE === '1' ? [['loader', process.uptime() * 1e3]] : undefined;
const url = import.meta.url;
if (!hasBuiltins()) useRequire((await import('node:module')).createRequire(url));
const { Script } = builtin('node:vm');

/**
 * The source text of __CLAW_HOT__, i.e. this file from that function on, as the engine already holds it for this
 * module: slices of it cost no read and no copy (V8 makes sliced strings). Undefined where an engine does not
 * return the exact text (the id is checked at both markers); then the loader reads the file instead.
 */
const own = ((): string | undefined => {
  try {
    const t = Function.prototype.toString.call(__CLAW_HOT__);
    const at = (o: number) => t.slice(o - BOOT.fn, o - BOOT.fn + BOOT.id.length);
    return at(BOOT.hot[0]) === BOOT.id && at(BOOT.coldMark) === BOOT.id ? t : undefined;
  } catch {
    return undefined;
  }
})();

/** Characters [start, end) of this file, from the engine's copy or else read from disk. */
function text(mark: number, start: number, end: number): string {
  return own !== undefined ? own.slice(start - BOOT.fn, end - BOOT.fn) : region(mark, start, end).toString('latin1');
}

/** Bytes [start, end) of this file, after checking the build id found at `mark` (the file may have been replaced). */
function region(mark: number, start: number, end: number): Buffer {
  const fs = builtin('node:fs');
  const file = builtin('node:url').fileURLToPath(url);
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.allocUnsafe(end - mark);
    let n = 0;
    while (n < b.length) {
      const r = fs.readSync(fd, b, n, b.length - n, mark + n);
      if (r === 0) break;
      n += r;
    }
    if (n !== b.length || b.toString('latin1', 0, BOOT.id.length) !== BOOT.id) {
      throw new Error(`claw: ${file} changed on disk since this process started (reinstalled?); restart claw`);
    }
    return b.subarray(start - mark);
  } finally {
    fs.closeSync(fd);
  }
}

/** Cold group g's base64 text, read when the hot code first needs that group (scripts/build/cold-hub.mjs). */
const payload = (g: number): string => text(BOOT.coldMark, BOOT.cold[g][0], BOOT.cold[g][1]);

let source = text(BOOT.hot[0], BOOT.hot[1], BOOT.hot[2]);
if (BOOT.esc) source = source.replaceAll('*\0', '*/');

// Bun keeps its own cache of compiled code and ignores V8 cached data: no files there.
const command = process.versions.bun ? undefined : cacheCommand(process.argv);
const dir = command ? cacheDir(process.env) : undefined;
const name =
  dir &&
  cacheFileName({
    buildId: BOOT.id,
    command: command!,
    nodeVersion: process.version,
    arch: process.arch,
    flags: `${process.execArgv.join('\0')}\0${process.env.NODE_OPTIONS ?? ''}`,
  });
const cachedData = name ? readCache(`${dir}/${name}`) : undefined;
// filename + lineOffset: stack traces point into dist/claw.mjs at the right line, as with a plain ESM bundle.
trace?.push(['cache read', process.uptime() * 1e3]);
const script = new Script(source, { filename: url, lineOffset: BOOT.hot[3], ...(cachedData ? { cachedData } : {}) });
// A start that took a one-off path (it wrote a manifest record, src/node/manifest-cache-store.ts) leaves no code
// cache: the next start takes the usual path and caches what that path compiles.
let oneOff = false;
if (name && (!cachedData || script.cachedDataRejected)) saveLater(dir!, name, () => (oneOff ? undefined : script.createCachedData()));
const run = script.runInThisContext() as (
  require: NodeRequire,
  module: object,
  exports: object,
  url: string,
  payload: (g: number) => string,
  boot: { id: string; cacheDir?: string; skipCodeCache(): void },
) => void;
const module = { exports: {} };
trace?.push(['compiled', process.uptime() * 1e3]);
run(hotRequire(), module, module.exports, url, payload, { id: BOOT.id, cacheDir: dir, skipCodeCache: () => (oneOff = true) }); // src/node/boot-info.ts
if (trace) traceFirstWrite(trace);

/**
 * Adds the first stdout write (a reply) to the trace and prints it as one JSON line on stderr. The reply goes to
 * fd 1 directly (src/node/stdout-now.ts) or through process.stdout; both are watched without creating the stream.
 */
function traceFirstWrite(marks: [string, number][]): void {
  marks.push(['main returned', process.uptime() * 1e3]);
  let done = false;
  const mark = () => {
    if (done) return;
    done = true;
    marks.push(['first write', process.uptime() * 1e3]);
    builtin('node:fs').writeSync(2, `${JSON.stringify({ startup_trace: Object.fromEntries(marks.map(([k, v]) => [k, Math.round(v * 1000) / 1000])) })}\n`);
  };
  const fs = builtin('node:fs');
  const writeSync = fs.writeSync;
  fs.writeSync = function (this: unknown, fd: number, ...rest: unknown[]) {
    if (fd === 1) mark();
    return (writeSync as (...a: unknown[]) => number).call(this, fd, ...rest);
  } as typeof fs.writeSync;
  const stdout = Object.getOwnPropertyDescriptor(process, 'stdout');
  if (!stdout?.get || !stdout.configurable) return;
  Object.defineProperty(process, 'stdout', {
    ...stdout,
    get() {
      const out = stdout.get!.call(process) as NodeJS.WriteStream;
      Object.defineProperty(process, 'stdout', stdout);
      const write = out.write;
      out.write = function (this: typeof out, ...args: unknown[]) {
        mark();
        return (write as (...a: unknown[]) => boolean).apply(this, args);
      } as typeof out.write;
      return out;
    },
  });
}

/**
 * The hot code's require: its bundled dependencies only ever ask for Node built-ins, which
 * process.getBuiltinModule gives without loading node:module (~0.8 ms with createRequire). Anything else, and
 * .resolve / .cache, go to a real require rooted at this file, made on first use.
 */
function hotRequire(): NodeRequire {
  const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  let full: NodeRequire | undefined;
  const real = () => (full ??= builtin('node:module').createRequire(url));
  if (typeof get !== 'function') return real();
  const req = ((id: string) => get.call(process, id) ?? real()(id)) as NodeRequire;
  Object.defineProperty(req, 'resolve', { get: () => real().resolve });
  Object.defineProperty(req, 'cache', { get: () => real().cache });
  return req;
}
