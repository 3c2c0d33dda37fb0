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
