// A manifest received in claw.initialize: an inline object, or a claw:// URI (spec §9.3.1) that we
// resolve through the configured registries.
// Its file references are untrusted (whoever can reach a transport wrote them): they resolve against, and must
// stay inside, the launch manifest's directory, or the runtime's working directory when it was started without
// one; symlinks leading out are refused too. docs/manifest.md "Manifests sent over the wire".
import { loadManifestValue, type LoadResult } from '../manifest/loader.ts';
import { parseSource } from '../manifest/source.ts';
import { parseClawUri } from '../manifest/uri.ts';
import { resolveRegistryUri } from '../manifest/registry.ts';
import { dirnameOf } from '../manifest/reader.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { SourceReader } from '../manifest/reader.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';

const WIRE = '<initialize>';

/** The one directory a wire manifest's file references may read from. */
export function wireRoot(d: { cwd: string; launchManifest?: Pick<ResolvedManifest, 'file'> }): string {
  return d.launchManifest ? dirnameOf(d.launchManifest.file) : d.cwd;
}

export async function loadWireManifest(
  value: unknown,
  defaultClaw: string,
  d: { reader: SourceReader; cwd: string; config: RuntimeConfig; launchManifest?: Pick<ResolvedManifest, 'file'> },
): Promise<LoadResult> {
  const root = wireRoot(d);
  const opts = { reader: d.reader, registries: d.config.registries, within: root };
  if (typeof value !== 'string') return loadManifestValue(value, { file: WIRE, baseDir: root, defaultClaw }, opts);
  const fail = (message: string, rule: string): LoadResult => ({ issues: [{ file: WIRE, path: 'manifest', message, rule, section: '§7' }] });
  const parsed = parseClawUri(value);
  if (!parsed.ok) return fail(`invalid claw:// URI: ${parsed.reason}`, 'uri');
  if (parsed.uri.form !== 'registry') return fail(`${parsed.uri.canonical} is not a manifest this runtime can fetch: use an inline manifest or a registry URI`, 'uri');
  const hit = await resolveRegistryUri(parsed.uri, opts);
  if (!hit.ok) return fail(hit.message, 'registry');
  const src = parseSource(hit.location, hit.bytes);
  if (!src.ok) return fail(src.issue.message, src.issue.rule);
  return loadManifestValue(src.source.value, { file: hit.location, baseDir: root, defaultClaw }, opts);
}
