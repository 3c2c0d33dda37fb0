// claw.runtime.yaml `audit:` — this machine's side of the Policy `audit` settings (spec §5.9): the
// Policy schema says *which* destination, but has no field for *where* (a webhook URL, a syslog
// host), and those are deployment facts that do not belong in a portable manifest. docs/audit.md.
import * as v from 'valibot';
import { lazySchema } from '../manifest/schema/helpers.ts';

/** Built inside the lazy schemas below, not at import. */
const positiveInt = () => v.pipe(v.number(), v.integer(), v.minValue(1));

export const auditRuntimeConfigSchema = lazySchema(() => v.strictObject({
  /** Start a new segment after this many seconds (default: retention / 4, at most 1 day). Only with a retention. */
  segment_seconds: v.optional(positiveInt()),
  /** …or when the active segment reaches this size (default 64 MiB). */
  segment_max_bytes: v.optional(v.pipe(positiveInt(), v.minValue(4096))),
  /** destination: sqlite — the mirror database (default data_dir/audit/audit.sqlite). */
  sqlite: v.optional(v.strictObject({ path: v.optional(v.pipe(v.string(), v.minLength(1))) })),
  /** destination: webhook — records POSTed in batches as {"records":[…]}. */
  webhook: v.optional(
    v.strictObject({
      url: v.pipe(v.string(), v.regex(/^https?:\/\/./, 'must be an http:// or https:// URL')),
      /** Sent as `Authorization: Bearer <secret>`; the value never appears in a log. */
      auth_secret_ref: v.optional(v.pipe(v.string(), v.minLength(1))),
      batch_max: v.optional(v.pipe(positiveInt(), v.maxValue(10_000))),
      flush_ms: v.optional(positiveInt()),
      queue_max: v.optional(v.pipe(positiveInt(), v.maxValue(1_000_000))),
      timeout_ms: v.optional(positiveInt()),
    }),
  ),
  /** destination: syslog — RFC 5424 over UDP (Node cannot send to the /dev/log datagram socket without native code). */
  syslog: v.optional(
    v.strictObject({
      host: v.optional(v.pipe(v.string(), v.minLength(1))),
      port: v.optional(v.pipe(positiveInt(), v.maxValue(65535))),
      /** RFC 5424 facility number, 0–23 (default 13, "log audit"). */
      facility: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(23))),
      app_name: v.optional(v.pipe(v.string(), v.regex(/^[!-~]{1,48}$/, 'must be 1–48 printable ASCII characters'))),
    }),
  ),
}));

export type AuditRuntimeConfig = v.InferOutput<typeof auditRuntimeConfigSchema>;
