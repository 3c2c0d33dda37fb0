// claw://registry/{namespace}/{name}@{version} resolution through registries named in the runtime
// configuration (spec §7 "Registry Resolution"; the registry list is runtime configuration, not
// protocol). Layout we read, documented in docs/manifest.md:
//   file:///srv/claw-registry  → /srv/claw-registry/{namespace}/{name}/{version}.yaml (or .json)
//   http(s)://host/v1          → GET {url}/{namespace}/{name}/{version}  (YAML or JSON body)
// Registries are tried in configuration order; the first that has the document wins.
import type { SourceReader } from './reader.ts';

export interface RegistryConfig {
  name: string;
  url: string;
}

export type RegistryHit = { ok: true; location: string; bytes: Uint8Array } | { ok: false; message: string };

export async function resolveRegistryUri(
  uri: { namespace: string; name: string; version: string; canonical: string },
  opts: { reader: SourceReader; registries?: RegistryConfig[] },
): Promise<RegistryHit> {
  const regs = opts.registries ?? [];
  if (regs.length === 0) {
    return { ok: false, message: `${uri.canonical} needs a registry: add one under "registries:" in claw.runtime.yaml` };
  }
  const tried: string[] = [];
  for (const r of regs) {
    const base = r.url.replace(/\/+$/, '');
    if (base.startsWith('file://')) {
      const dir = decodeURIComponent(base.slice('file://'.length));
      for (const ext of ['yaml', 'yml', 'json']) {
        const path = `${dir}/${uri.namespace}/${uri.name}/${uri.version}.${ext}`;
        tried.push(path);
        try {
          return { ok: true, location: path, bytes: await opts.reader.read(path) };
        } catch {
          /* try the next candidate */
        }
      }
    } else if (/^https?:\/\//.test(base) && opts.reader.fetch) {
      const url = `${base}/${encodeURIComponent(uri.namespace)}/${encodeURIComponent(uri.name)}/${encodeURIComponent(uri.version)}`;
      tried.push(url);
      try {
        const bytes = await opts.reader.fetch(url);
        if (bytes) return { ok: true, location: url, bytes };
      } catch (e) {
        tried[tried.length - 1] += ` (${(e as Error).message})`;
      }
    } else tried.push(`${r.name}: unsupported registry URL ${r.url}`);
  }
  return { ok: false, message: `${uri.canonical} was not found in any registry (tried ${tried.join(', ')})` };
}
