// Finding and validating claw.runtime.yaml: `--config FILE`, else the file beside the manifest,
// else none (embedded defaults). Relative paths inside it resolve against its own directory.
import { runtimeConfigSchema, RUNTIME_CONFIG_FILE, type RuntimeConfig } from './runtime-config.ts';
import { parseSource } from '../manifest/source.ts';
import { unreadable } from '../manifest/unreadable.ts';
import { schemaIssues } from '../manifest/schema-issues.ts';
import { realSchema } from '../manifest/schema/helpers.ts';
import { formatPath, type ManifestIssue } from '../manifest/issues.ts';
import { dirnameOf, joinPath, type SourceReader } from '../manifest/reader.ts';
import * as v from 'valibot';

export interface LoadedConfig {
  config: RuntimeConfig;
  /** The file it came from, or undefined for the embedded defaults. */
  file?: string;
  issues: ManifestIssue[];
}

export async function loadRuntimeConfig(reader: SourceReader, opts: { explicit?: string; besideDir?: string }): Promise<LoadedConfig> {
  const file = opts.explicit ?? (opts.besideDir ? joinPath(opts.besideDir, RUNTIME_CONFIG_FILE) : undefined);
  if (!file) return { config: {}, issues: [] };
  // Only an explicitly named config must exist; the one beside the manifest is optional.
  if (!opts.explicit && reader.exists?.(file) === false) return { config: {}, issues: [] };
  let bytes: Uint8Array;
  try {
    bytes = await reader.read(file);
  } catch (e) {
    if (!opts.explicit && (e as { code?: string }).code === 'ENOENT') return { config: {}, issues: [] };
    const { why, rule } = unreadable((e as { code?: string }).code, undefined);
    return { config: {}, file, issues: [{ file, path: '(root)', message: `runtime configuration ${why}`, rule }] };
  }
  const parsed = parseSource(file, bytes);
  if (!parsed.ok) {
    const i = parsed.issue;
    return { config: {}, file, issues: [{ file, pos: i.pos, path: formatPath(i.segments), message: i.message, rule: i.rule }] };
  }
  const value = parsed.source.value ?? {};
  const schema = realSchema(runtimeConfigSchema);
  const raw = schemaIssues(schema, value, { file, prefix: [] });
  if (raw.length > 0) {
    return {
      config: {},
      file,
      issues: raw.map((r) => ({ file, pos: parsed.source.locate(r.segments), path: formatPath(r.segments), message: r.message, rule: r.rule })),
    };
  }
  const config = v.parse(schema, value);
  const base = dirnameOf(file);
  if (config.data_dir) config.data_dir = joinPath(base, config.data_dir);
  if (config.secrets?.dir) config.secrets.dir = joinPath(base, config.secrets.dir);
  return { config, file, issues: [] };
}
