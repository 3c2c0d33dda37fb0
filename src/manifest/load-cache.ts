// A cache of validated launch manifests (docs/startup.md "The manifest cache"). `claw run FILE` reads, parses and
// validates the same manifest on every start: ~1 ms of YAML and schema work on the path to the first reply, on a
// board that may restart an agent many times a day. After a load that found no issue, the resolved manifest is
// kept with the exact text of every file the load read; a later start whose files all still read the same,
// byte for byte, and that runs the same build with the same registries, takes the kept result instead of
// loading again. Anything else (a changed or missing file, another build, a directory listing or a registry
// fetch during the load, a result that JSON cannot carry exactly) loads as before.
import type { SourceReader } from './reader.ts';
import type { ResolvedManifest } from './resolved.ts';

/** Where records live (src/node/manifest-cache-store.ts on Node); both methods never throw. */
export interface ManifestCacheStore {
  read(key: string): Uint8Array | undefined;
  write(key: string, data: Uint8Array): void;
}

export interface ManifestCache {
  store: ManifestCacheStore;
  /** Identifies the code that validated: a record from another build is never used. */
  build: string;
}

/** The shape of a record, version 1. */
interface CacheRecord {
  v: 1;
  build: string;
  path: string;
  /** JSON of the registries configuration the load ran with. */
  registries: string;
  /** Every file the load read, with its text (valid UTF-8 only: decoding is then one-to-one). */
  inputs: [path: string, text: string][];
  manifest: ResolvedManifest;
}

// One decoder, made on first use (not at import): a non-streaming decode keeps no state between calls.
let utf8: InstanceType<typeof TextDecoder> | undefined;

function textOf(bytes: Uint8Array): string | undefined {
  try {
    return (utf8 ??= new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The kept result for `path`, if every condition above holds; undefined otherwise. Never throws. */
export async function cachedManifest(path: string, registries: unknown, reader: SourceReader, cache: ManifestCache): Promise<ResolvedManifest | undefined> {
  const bytes = cache.store.read(path);
  if (!bytes) return undefined;
  let rec: CacheRecord;
  try {
    rec = JSON.parse(textOf(bytes) ?? 'null');
  } catch {
    return undefined;
  }
  if (rec?.v !== 1 || rec.build !== cache.build || rec.path !== path || rec.registries !== JSON.stringify(registries ?? null)) return undefined;
  if (!Array.isArray(rec.inputs) || rec.inputs.length === 0 || typeof rec.manifest !== 'object' || rec.manifest === null) return undefined;
  for (const input of rec.inputs) {
    if (!Array.isArray(input) || typeof input[0] !== 'string' || typeof input[1] !== 'string') return undefined;
    let now: Uint8Array;
    try {
      now = await reader.read(input[0]);
    } catch {
      return undefined;
    }
    if (textOf(now) !== input[1]) return undefined;
  }
  return rec.manifest;
}

/** A reader that remembers what the load read, and whether the load did anything a record cannot replay. */
export function recordingReader(reader: SourceReader): { reader: SourceReader; inputs: Map<string, Uint8Array>; replayable: () => boolean } {
  const inputs = new Map<string, Uint8Array>();
  let replayable = true;
  return {
    inputs,
    replayable: () => replayable,
    reader: {
      async read(p) {
        try {
          const b = await reader.read(p);
          inputs.set(p, b);
          return b;
        } catch (e) {
          replayable = false; // a file that was missing could appear: the record could not notice
          throw e;
        }
      },
      async list(dir) {
        replayable = false; // a directory's entries can change without any file read changing
        return reader.list(dir);
      },
      ...(reader.fetch
        ? {
            async fetch(url: string) {
              replayable = false; // a registry answers from elsewhere
              return reader.fetch!(url);
            },
          }
        : {}),
    },
  };
}

/** Keeps a result; does nothing when it cannot be kept exactly. Never throws. */
export function keepManifest(path: string, registries: unknown, inputs: Map<string, Uint8Array>, manifest: ResolvedManifest, cache: ManifestCache): void {
  try {
    const texts: [string, string][] = [];
    for (const [p, b] of inputs) {
      const t = textOf(b);
      if (t === undefined) return;
      texts.push([p, t]);
    }
    if (texts.length === 0) return;
    const json = JSON.stringify(manifest);
    // The record must give back exactly this value: no undefined members, Maps, Dates, non-finite numbers.
    if (!sameJson(JSON.parse(json), manifest)) return;
    const rec = `{"v":1,"build":${JSON.stringify(cache.build)},"path":${JSON.stringify(path)},"registries":${JSON.stringify(JSON.stringify(registries ?? null))},"inputs":${JSON.stringify(texts)},"manifest":${json}}`;
    cache.store.write(path, new TextEncoder().encode(rec));
  } catch {
    // a cache that cannot be written costs the next start its shortcut, nothing else
  }
}

/** Deep equality of a JSON round trip with the original: plain objects, arrays, strings, finite numbers, booleans, null. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return typeof b !== 'number' || Number.isFinite(b);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(b)) {
    if (!Array.isArray(a) || a.length !== b.length) return false;
    for (let i = 0; i < b.length; i++) if (!(i in b) || !sameJson(a[i], b[i])) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(b);
  if ((proto !== Object.prototype && proto !== null) || Array.isArray(a)) return false;
  const kb = Object.keys(b);
  const ka = Object.keys(a as object);
  if (ka.length !== kb.length) return false;
  for (const k of kb) if (!Object.prototype.hasOwnProperty.call(a, k) || !sameJson((a as any)[k], (b as any)[k])) return false;
  return true;
}
