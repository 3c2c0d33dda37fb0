// claw.runtime.yaml: this machine's settings, kept out of the portable manifest (like the spec's
// registry example in §7). Validated like a manifest: unknown keys are errors, every issue reported.
import * as v from 'valibot';
import { sandboxRuntimeConfigSchema } from '../sandbox/config.ts';
import { fsTransportOptionsSchema } from '../transports/fs/options.ts';
import { mqttOptionsSchema } from '../transports/mqtt/options.ts';
import { httpOptionsSchema } from '../transports/http/options.ts';
import { swarmRuntimeConfigSchema } from '../swarm/config.ts';
import { channelsConfigSchema } from '../channels/config.ts';
import { auditRuntimeConfigSchema } from '../audit/config.ts';
import { mcpRuntimeConfigSchema } from '../tools/mcp/config.ts';
import { mqttToolsConfigSchema } from '../tools/builtins/mqtt-config.ts';
import { a2aPeersSchema } from '../a2a/client/config.ts';
import { lazySchema } from '../manifest/schema/helpers.ts';

/** Both provider limits are at most an hour: beyond that a hung model is not told from a slow one. */
const MAX_PROVIDER_TIMEOUT_MS = 3_600_000;

// Built on first use (docs/startup.md): only a present claw.runtime.yaml needs it, and building its ~110
// valibot schemas cost every start; the section schemas imported above are still built by their modules.
export const runtimeConfigSchema = lazySchema(() => {
  const positiveInt = v.pipe(v.number(), v.integer(), v.minValue(1));

  return v.strictObject({
    /** Where the runtime keeps state (ledgers, dedup caches, memory). Relative to the config file. */
    data_dir: v.optional(v.pipe(v.string(), v.minLength(1))),
    heartbeat: v.optional(v.strictObject({ interval_ms: v.optional(positiveInt) })),
    shutdown: v.optional(v.strictObject({ timeout_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))) })),
    limits: v.optional(
      v.strictObject({
        max_frame_bytes: v.optional(v.pipe(positiveInt, v.maxValue(256 * 1024 * 1024))),
        max_depth: v.optional(v.pipe(positiveInt, v.maxValue(10_000))),
      }),
    ),
    registries: v.optional(
      v.array(
        v.strictObject({
          name: v.pipe(v.string(), v.minLength(1)),
          url: v.pipe(v.string(), v.regex(/^(file|https?):\/\/./, 'must be a file://, http:// or https:// URL')),
        }),
      ),
    ),
    secrets: v.optional(
      v.strictObject({
        /** Directory of secret files; overrides $CLAW_SECRETS_DIR (runtime profile §7 step 3). */
        dir: v.optional(v.pipe(v.string(), v.minLength(1))),
        /** Look secrets up in the environment (runtime profile §7 step 2). Default true. */
        env: v.optional(v.boolean()),
      }),
    ),
    log: v.optional(v.strictObject({ level: v.optional(v.picklist(['debug', 'info', 'warn', 'error'])) })),
    /**
     * Tool bindings (docs/tools.md): the manifest declares tools, this binds them to implementations.
     * A manifest tool named like a builtin is bound to it without an entry here.
     */
    tools: v.optional(
      v.record(
        v.pipe(v.string(), v.minLength(1)),
        v.union([
          v.strictObject({ builtin: v.picklist(['echo', 'shell', 'file-read', 'file-write', 'http-fetch', 'mqtt-publish', 'mqtt-read', 'a2a-send']) }),
          v.strictObject({
            exec: v.strictObject({
              bin: v.pipe(v.string(), v.minLength(1)),
              argv: v.optional(v.array(v.string())),
              cwd: v.optional(v.string()),
              env: v.optional(v.record(v.string(), v.string())),
              secrets: v.optional(v.array(v.pipe(v.string(), v.minLength(1)))),
            }),
          }),
        ]),
      ),
    ),
    /** Named downgrades this operator accepts and the SIGTERM → SIGKILL grace (src/sandbox/config.ts). */
    sandbox: v.optional(sandboxRuntimeConfigSchema),
    approvals: v.optional(
      v.strictObject({
        /** How long a `supervised` identity's approval waits (policy rules carry their own timeout). */
        default_timeout_seconds: v.optional(positiveInt),
      }),
    ),
    idempotency: v.optional(v.strictObject({ window_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(300_000))) })),
    /** Where the swarm's peers meet (docs/swarm.md): the manifest's `backend` enum has neither fs nor MQTT. */
    swarm: v.optional(swarmRuntimeConfigSchema),
    /** The memory database (docs/memory.md): adapter choice and the sql.js snapshot policy. */
    memory: v.optional(
      v.strictObject({
        /**
         * auto: the journalled layout (sql.js; on Bun the image held by bun:sqlite), the native engine only for a
         * file it made (docs/memory.md "Choosing the adapter"); native: node:sqlite / bun:sqlite; sqljs: sql.js.
         */
        adapter: v.optional(v.picklist(['auto', 'native', 'sqljs'])),
        /** node:sqlite / bun:sqlite: page size of a new database file (power of two, 512–65536; default 4096). */
        page_size: v.optional(v.pipe(v.number(), v.integer(), v.check((n) => n >= 512 && n <= 65536 && (n & (n - 1)) === 0, 'must be a power of two from 512 to 65536'))),
        snapshot: v.optional(
          v.strictObject({
            /** Snapshot when the journal reaches ratio × the last snapshot's size (default 2)… */
            ratio: v.optional(v.pipe(v.number(), v.minValue(0.1))),
            /** …but not below this many journal bytes (default 1 MiB)… */
            min_journal_bytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
            /** …and always at this many (default 64 MiB: bounds replay time on start). */
            max_journal_bytes: v.optional(positiveInt),
            /** Also snapshot a journal older than this (default 0 = never). */
            max_age_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
          }),
        ),
      }),
    ),
    /**
     * Transports served besides stdio (docs/transports.md): fs and MQTT are not in the manifest's swarm
     * `backend` enum, so they bind here and the manifest stays valid against the official schemas.
     */
    transports: v.optional(
      v.array(
        v.strictObject({
          /** `fs:/dir`, `mqtt://host/...`: the same URI `claw run --listen` takes. */
          listen: v.pipe(v.string(), v.regex(/^[a-z][a-z0-9+.-]*:./i, 'must be a URI such as fs:/var/lib/claw/ipc')),
          fs: v.optional(fsTransportOptionsSchema),
          /** mqtt:// and mqtts:// entries (docs/transports.md, MQTT): credentials by secret_ref, TLS CA, session. */
          mqtt: v.optional(mqttOptionsSchema),
          /** http:// and https:// entries (docs/transports.md, HTTP): bearer tokens by secret_ref, TLS files, limits. */
          http: v.optional(httpOptionsSchema),
        }),
      ),
    ),
    /** The FemtoClaw agent loop (docs/agent.md). */
    agent: v.optional(
      v.strictObject({
        /** Send tool definitions to providers with native tool calling (default true). */
        native_tools: v.optional(v.boolean()),
        /** Rejected model outputs fed back as corrections per turn before giving up (default 2). */
        max_corrections: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10))),
        /** Tool calls per turn (default 8). */
        max_tool_steps: v.optional(v.pipe(positiveInt, v.maxValue(100))),
      }),
    ),
    /** Per Provider, by metadata.name. */
    providers: v.optional(
      v.record(
        v.pipe(v.string(), v.minLength(1)),
        v.strictObject({
          /**
           * How the model is asked for FemtoClaw output (docs/agent.md "Output modes"). `auto` (default):
           * native tool calling, then json_schema, then prompt, as the server allows.
           */
          output: v.optional(v.picklist(['auto', 'native', 'json_schema', 'prompt'])),
          /** One attempt's wait for response headers and between chunks (default 120000; docs/providers.md "Timeouts"). */
          timeout_ms: v.optional(v.pipe(positiveInt, v.maxValue(MAX_PROVIDER_TIMEOUT_MS))),
          /** One attempt's whole time, however the bytes trickle (default 600000). */
          attempt_deadline_ms: v.optional(v.pipe(positiveInt, v.maxValue(MAX_PROVIDER_TIMEOUT_MS))),
        }),
      ),
    ),
    /** Queue channels bound to an fs inbox or an MQTT topic, by Channel name (docs/channels.md). */
    channels: v.optional(channelsConfigSchema),
    /** The broker and topic allowlists of the mqtt-publish / mqtt-read builtins (docs/tools.md). */
    mqtt_tools: v.optional(mqttToolsConfigSchema),
    /** Audit segments and where Policy `audit.destination` copies go (docs/audit.md "Destinations"). */
    audit: v.optional(auditRuntimeConfigSchema),
    /** The CKP-A2A profile (docs/a2a.md): an AgentCard and the A2A JSON-RPC binding on every HTTP listener. */
    a2a: v.optional(
      v.strictObject({
        enabled: v.optional(v.boolean()),
        /**
         * The A2A JSON-RPC endpoint path on the HTTP listener (default /a2a): segments not empty, `.` or `..`. One
         * that overlaps the CKP endpoint, /healthz or /.well-known/ is refused at start (a2a/module.ts).
         */
        path: v.optional(v.pipe(v.string(), v.regex(/^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9._~-]+)+$/, 'must be an absolute path such as /a2a, no empty, . or .. segment, no trailing /'))),
        /** The public base URL the card advertises (behind a proxy); default: the listener's own URL. */
        public_url: v.optional(v.pipe(v.string(), v.regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL'))),
        /** A2A callers' turns may use tools (default false: A2A input is untrusted, CKP-A2A profile §8). */
        tools: v.optional(v.boolean()),
        /** Tasks kept (oldest finished ones dropped first; default 1000). */
        max_tasks: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000))),
        /** Remote A2A agents the a2a-send builtin may talk to, by agent card URL (docs/a2a.md "Client"). */
        peers: v.optional(a2aPeersSchema),
        /** Finished tasks are dropped this long after their last change (default 30 days; 0 = no age limit). */
        max_task_age_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
        /** Tasks one A2A caller may hold (default a tenth of max_tasks): its own oldest finished ones go first. */
        max_tasks_per_caller: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000))),
        /** Agent turns running at once (default 4): a caller's message over it gets HTTP 429 / JSON-RPC -32603, no task. */
        max_concurrent_tasks: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000))),
        /** Largest A2A message, all parts counted (default 64 KiB); larger: invalid params. */
        max_message_bytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(4 * 1024 * 1024))),
      }),
    ),
    /** MCP servers over Streamable HTTP, by mcp_source.uri: credentials and loopback (docs/tools.md "MCP over HTTP"). */
    mcp: v.optional(mcpRuntimeConfigSchema),
  });
});

export type RuntimeConfig = v.InferOutput<typeof runtimeConfigSchema>;

export const RUNTIME_CONFIG_FILE = 'claw.runtime.yaml';
