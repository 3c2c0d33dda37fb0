// The `http:` block of a claw.runtime.yaml transport entry (docs/transports.md, HTTP). Only the schema: the runtime
// configuration imports it at start-up, the rest of the transport (./settings.ts on) loads when an http URI is used.
import * as v from 'valibot';
import { lazySchema } from '../../manifest/schema/helpers.ts';

/** Built inside the lazy schema below, not at import. */
const count = () => v.pipe(v.number(), v.integer(), v.minValue(1));
const ms = () => v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3_600_000));
const file = () => v.pipe(v.string(), v.minLength(1));

/** The `http:` block of a transport entry in claw.runtime.yaml. Every key optional. */
export const httpOptionsSchema = lazySchema(() =>
  v.strictObject({
    auth: v.optional(
      v.strictObject({
        /** secret_refs of the accepted bearer tokens (runtime profile §7); several allow rotation. */
        bearer_token_refs: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.minLength(1))),
        /** A2A callers' tokens: accepted on the A2A routes only, never on the CKP endpoint (docs/a2a.md "Security"). */
        a2a_token_refs: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.minLength(1))),
        /**
         * Client-certificate CNs that are operators when the listener serves A2A; any other certificate the CA
         * signed is then an A2A caller (A2A routes only, 403 on the CKP endpoint; docs/a2a.md "Security").
         */
        operator_cns: v.optional(v.array(v.pipe(v.string(), v.minLength(1)))),
        /**
         * Plain http on a non-loopback address carries tokens in clear text: refused unless this is true
         * (a TLS-terminating proxy in front, a private container network).
         */
        allow_plaintext: v.optional(v.boolean()),
      }),
    ),
    /**
     * Browser origins allowed to call the agent (`https://console.example`): a request with an `Origin` header
     * that is neither on this machine nor listed is refused (a web page must not drive a local agent).
     */
    allowed_origins: v.optional(v.array(v.pipe(v.string(), v.regex(/^https?:\/\/[^/]+$/, 'must be an origin such as https://console.example')))),
    /** https:// only. Files are relative to the config file. */
    tls: v.optional(
      v.strictObject({
        cert_file: file(),
        key_file: file(),
        /** Require a client certificate signed by this CA (mutual TLS); counts as authentication. */
        client_ca_file: v.optional(file()),
      }),
    ),
    limits: v.optional(
      v.strictObject({
        /** Largest request body (default: limits.max_frame_bytes, 4 MiB). */
        max_body_bytes: v.optional(v.pipe(count(), v.maxValue(256 * 1024 * 1024))),
        /** All request headers must arrive within this (default 10 s): slow-header clients are cut off. */
        headers_timeout_ms: v.optional(ms()),
        /** The whole request (headers and body) must arrive within this (default 30 s). */
        request_timeout_ms: v.optional(ms()),
        /** A keep-alive connection with no request in flight is closed after this (default 5 s). */
        idle_timeout_ms: v.optional(ms()),
        /** Open connections at once (default 128); more are closed at accept. */
        max_connections: v.optional(v.pipe(count(), v.maxValue(65_536))),
        /** Open SSE streams at once (default 16). */
        max_streams: v.optional(v.pipe(count(), v.maxValue(4_096))),
        /** Requests per minute per client address (default 6000; 0 turns the limit off). */
        requests_per_minute: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
      }),
    ),
    sse: v.optional(
      v.strictObject({
        /** Agent notifications kept for `Last-Event-ID` resume (default 256). */
        buffer: v.optional(v.pipe(count(), v.maxValue(100_000))),
        /** Comment line sent on an idle stream so proxies keep it open (default 15 s). */
        keepalive_ms: v.optional(ms()),
      }),
    ),
  }),
);
export type HttpOptionsInput = v.InferOutput<typeof httpOptionsSchema>;
