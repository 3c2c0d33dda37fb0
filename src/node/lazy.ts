// Node built-ins that only some agents need, loaded on first use: an agent with no tools never pays
// for node:child_process, node:http(s) or node:dns at start-up (BENCH.md: importing them cost ~1.1x
// the bare start time and ~7% RSS). Each loader caches its promise.
let cp: Promise<typeof import('node:child_process')> | undefined;
let http: Promise<typeof import('node:http')> | undefined;
let https: Promise<typeof import('node:https')> | undefined;
let dns: Promise<typeof import('node:dns')> | undefined;

export const childProcess = () => (cp ??= import('node:child_process'));
export const httpModule = () => (http ??= import('node:http'));
export const httpsModule = () => (https ??= import('node:https'));
export const dnsModule = () => (dns ??= import('node:dns'));

// node:crypto is used synchronously (ids, hashes), so it is required on first use rather than
// imported: importing it costs ~1.4 MB RSS at start-up (OpenSSL), in every agent (BENCH.md).
// process.getBuiltinModule (Node >= 20.16, Bun) first; else the require the loader passes every chunk
// (targets/boot.ts). No node:module here: loading it and calling
// createRequire cost ~0.8 ms at every start (docs/startup.md).
let cryptoModule: typeof import('node:crypto') | undefined;
export const nodeCrypto = (): typeof import('node:crypto') =>
  (cryptoModule ??= (process.getBuiltinModule?.('node:crypto') as typeof import('node:crypto') | undefined) ?? (require('node:crypto') as typeof import('node:crypto')));
