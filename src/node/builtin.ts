// Node built-ins for the boot loader (targets/boot.ts) and the code-cache files it reads (code-cache.ts),
// taken with process.getBuiltinModule (Node >= 20.16 / 22.3, Bun) rather than an ESM `import`: an ES module's
// import of a built-in makes Node build an ESM facade that reads every export, and the lazy ones load more
// built-ins — `node:fs`'s ReadStream getter loads the fs streams, `node:module`'s SourceMap the source-map
// support — about 1 ms and 130 KB of heap at every start that nothing here uses (measured with --heap-prof).
// Older runtimes (Node 18, Node 20 < 20.16): the loader hands its copy of this module a require (useRequire)
// before any use. The chunks hold a copy of their own (the sandbox's probe cache reads and writes through
// code-cache.ts), which runs inside the loader's `function (require, module, ...)`: there that require serves.

interface BuiltinModules {
  'node:fs': typeof import('node:fs');
  'node:vm': typeof import('node:vm');
  'node:url': typeof import('node:url');
  'node:module': typeof import('node:module');
  'node:os': typeof import('node:os');
  'node:v8': typeof import('node:v8');
}
type GetBuiltin = <ID extends keyof BuiltinModules>(id: ID) => BuiltinModules[ID];

const native = (process as { getBuiltinModule?: unknown }).getBuiltinModule;
let get: GetBuiltin | undefined = typeof native === 'function' ? (native.bind(process) as GetBuiltin) : undefined;

/** Whether built-ins can be had without an ESM import. */
export const hasBuiltins = (): boolean => get !== undefined;

/** The fallback: a CommonJS require (from node:module's createRequire). */
export function useRequire(req: (id: string) => unknown): void {
  get ??= req as GetBuiltin;
}

export function builtin<ID extends keyof BuiltinModules>(id: ID): BuiltinModules[ID] {
  return (get ?? (require as unknown as GetBuiltin))(id);
}
