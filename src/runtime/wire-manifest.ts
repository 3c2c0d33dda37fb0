// A manifest received in claw.initialize: an inline object, or a claw:// URI (spec §9.3.1) that we
// resolve through the configured registries. Relative file references resolve against the cwd.
import { loadManifestValue, type LoadResult } from '../manifest/loader.ts';
import { parseSource } from '../manifest/source.ts';
import { parseClawUri } from '../manifest/uri.ts';
import { resolveRegistryUri } from '../manifest/registry.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { SourceReader } from '../manifest/reader.ts';

const WIRE = '<initialize>';

export async function loadWireManifest(
  value: unknown,
  defaultClaw: string,
  d: { reader: SourceReader; cwd: string; config: RuntimeConfig },
): Promise<LoadResult> {
  const opts = { reader: d.reader, registries: d.config.registries };
  if (typeof value !== 'string') return loadManifestValue(value, { file: WIRE, baseDir: d.cwd, defaultClaw }, opts);
  const fail = (message: string, rule: string): LoadResult => ({ issues: [{ file: WIRE, path: 'manifest', message, rule, section: '§7' }] });
  const parsed = parseClawUri(value);
  if (!parsed.ok) return fail(`invalid claw:// URI: ${parsed.reason}`, 'uri');
  if (parsed.uri.form !== 'registry') return fail(`${parsed.uri.canonical} is not a manifest this runtime can fetch: use an inline manifest or a registry URI`, 'uri');
  const hit = await resolveRegistryUri(parsed.uri, opts);
  if (!hit.ok) return fail(hit.message, 'registry');
  const src = parseSource(hit.location, hit.bytes);
  if (!src.ok) return fail(src.issue.message, src.issue.rule);
  return loadManifestValue(src.source.value, { file: hit.location, baseDir: d.cwd, defaultClaw }, opts);
}
