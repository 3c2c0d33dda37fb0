// Options of the filesystem transport (docs/transports.md), as claw.runtime.yaml's `transports[].fs`
// and as query parameters of an `fs:` URI (`fs:/dir?poll_interval_ms=100&watch=false`).
import * as v from 'valibot';
import { lazySchema } from '../../manifest/schema/helpers.ts';

/** Built inside the lazy schemas below, not at import. */
const ms = () => v.pipe(v.number(), v.integer(), v.minValue(1));

export const fsTransportOptionsSchema = lazySchema(() => v.strictObject({
  /** Use fs.watch (inotify, kqueue, FSEvents) to see new requests at once. Default true. */
  watch: v.optional(v.boolean()),
  /** Directory scan interval: the only mechanism with watch: false, a safety net under it otherwise. */
  poll_interval_ms: v.optional(v.pipe(ms(), v.maxValue(3_600_000))),
  /** What happens to a processed request file. Default archive. */
  processed: v.optional(v.picklist(['archive', 'delete'])),
  /** How long archived requests, unclaimed replies and rejected files are kept. */
  retention_ms: v.optional(ms()),
  /** A `.tmp` file older than this is a crashed writer's leftover and is removed. */
  tmp_max_age_ms: v.optional(ms()),
  /** How long an answered request_id is remembered (re-delivery gets the stored reply). At least 5 min. */
  dedup_retention_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(300_000))),
  /** Notification files kept in notifications/ (oldest removed first). */
  notifications_keep: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /**
   * Power-loss safety: fsync the claim (processing/ directory) before a request runs and the stored
   * answer (data and directory) before the request is retired. Default false: process crashes are
   * covered without it (the page cache survives them); power loss needs it.
   */
  fsync: v.optional(v.boolean()),
  /**
   * Permissions of the files this side writes (requests, replies, notifications), as an octal string.
   * Default "0600"; "0660" with a shared group when writer and reader run under different uids.
   */
  file_mode: v.optional(v.pipe(v.string(), v.regex(/^0?[0-7]{3}$/, 'must be an octal mode such as "0660"'))),
  /** Requests claimed and not yet answered at once; the rest wait in inbox/ (a flood stays bounded). */
  max_in_flight: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  /** Bytes of request files held in memory at once (one request is always let through). */
  max_in_flight_bytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
}));

export type FsTransportOptions = v.InferOutput<typeof fsTransportOptionsSchema>;

export const FS_DEFAULTS = {
  watch: true,
  poll_interval_ms: 250,
  processed: 'archive' as 'archive' | 'delete',
  retention_ms: 24 * 3600_000,
  tmp_max_age_ms: 5 * 60_000,
  dedup_retention_ms: 24 * 3600_000,
  notifications_keep: 100,
  fsync: false,
  file_mode: '0600',
  // Sized for a 256 MB board: a request costs a few times its bytes while parsed and routed.
  max_in_flight: 16,
  max_in_flight_bytes: 16 * 1024 * 1024,
};

export type ResolvedFsOptions = typeof FS_DEFAULTS;

const BOOL_KEYS = new Set(['watch', 'fsync']);
const NUM_KEYS = new Set(['poll_interval_ms', 'retention_ms', 'tmp_max_age_ms', 'dedup_retention_ms', 'notifications_keep', 'max_in_flight', 'max_in_flight_bytes']);

/**
 * `fs:/abs/dir`, `fs:///abs/dir`, `fs:rel/dir` (against `baseDir`), with options as query parameters.
 * Returns the directory and the options given in the URI, or an error message.
 */
export function parseFsUri(uri: string, baseDir: string): { dir: string; options: FsTransportOptions } | { error: string } {
  if (!uri.startsWith('fs:')) return { error: `not an fs: URI: ${uri}` };
  let rest = uri.slice(3);
  const q = rest.indexOf('?');
  const query = q === -1 ? '' : rest.slice(q + 1);
  if (q !== -1) rest = rest.slice(0, q);
  if (rest.startsWith('//')) {
    // fs://host/path is not a thing; fs:///abs is.
    if (!rest.startsWith('///')) return { error: `fs: URI with a host is not supported (use fs:/abs/dir or fs:///abs/dir): ${uri}` };
    rest = rest.slice(2);
  }
  if (rest === '') return { error: `fs: URI needs a directory: ${uri}` };
  let dir = rest.startsWith('/') ? rest : `${baseDir.replace(/\/+$/, '')}/${rest}`;
  dir = dir.replace(/\/+$/, '') || '/';
  const raw: Record<string, unknown> = {};
  for (const [k, val] of new URLSearchParams(query)) {
    if (BOOL_KEYS.has(k)) {
      if (val !== 'true' && val !== 'false') return { error: `fs: option ${k} must be true or false` };
      raw[k] = val === 'true';
    } else if (NUM_KEYS.has(k)) {
      const n = Number(val);
      if (!Number.isInteger(n)) return { error: `fs: option ${k} must be an integer` };
      raw[k] = n;
    } else if (k === 'processed' || k === 'file_mode') raw[k] = val;
    else return { error: `unknown fs: option ${k}` };
  }
  const parsed = v.safeParse(fsTransportOptionsSchema, raw);
  if (!parsed.success) return { error: `fs: option ${parsed.issues[0].path?.map((p) => p.key).join('.') ?? ''}: ${parsed.issues[0].message}` };
  return { dir, options: parsed.output };
}

export const modeOf = (octal: string): number => parseInt(octal, 8);

export function resolveFsOptions(...layers: (FsTransportOptions | undefined)[]): ResolvedFsOptions {
  const out = { ...FS_DEFAULTS };
  for (const l of layers) if (l) for (const [k, val] of Object.entries(l)) if (val !== undefined) (out as Record<string, unknown>)[k] = val;
  return out;
}
