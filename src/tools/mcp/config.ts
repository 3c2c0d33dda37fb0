// claw.runtime.yaml `mcp:` — this machine's side of MCP servers reached over Streamable HTTP
// (spec §5.4 mcp_source `https://`): the manifest names the endpoint, and only the endpoint, since
// it is portable and must not carry credentials. Keyed by the mcp_source.uri exactly as written.
// docs/tools.md "MCP over HTTP", docs/runtime-config.md.
import * as v from 'valibot';
import { lazySchema } from '../../manifest/schema/helpers.ts';

/** Headers the transport sets itself (framing, session, protocol version): never from configuration. */
export const RESERVED_MCP_HEADERS = ['host', 'content-type', 'content-length', 'transfer-encoding', 'connection', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];

export const mcpRuntimeConfigSchema = lazySchema(() => {
  const nonEmpty = v.pipe(v.string(), v.minLength(1));
  const headerName = v.pipe(
    v.string(),
    v.regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name'),
    v.check((n) => !RESERVED_MCP_HEADERS.includes(n.toLowerCase()), 'is set by the MCP transport itself'),
  );
  const headerValue = v.pipe(v.string(), v.regex(/^[^\r\n\0]*$/, 'must not contain line breaks or NUL'));
  return v.strictObject({
    /** Waits between attempts to reach an HTTP server that is down at STARTING (default [500, 1000, 2000]). */
    start_retry_delays_ms: v.optional(v.pipe(v.array(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(60_000))), v.maxLength(10))),
    servers: v.optional(
      v.record(
        v.pipe(v.string(), v.regex(/^https?:\/\/./i, 'must be the https:// (or http://) mcp_source.uri, as written in the manifest')),
        v.strictObject({
          /** Sent as `Authorization: Bearer <secret>`; the value never appears in an error or a log. */
          bearer_secret_ref: v.optional(nonEmpty),
          /** More headers: a literal value, or { secret_ref } for a value from the secret store. */
          headers: v.optional(v.record(headerName, v.union([headerValue, v.strictObject({ secret_ref: nonEmpty })]))),
          /** Allow this server on a loopback address (127.0.0.0/8, ::1), and plain http:// to one. */
          allow_loopback: v.optional(v.boolean()),
        }),
      ),
    ),
  });
});

export type McpRuntimeConfig = v.InferOutput<typeof mcpRuntimeConfigSchema>;
