// Tool implementations backed by MCP servers (spec §5.4 "MCP Compatibility"), and the pool that
// lets several manifest Tools pointing at the same server share one client (one process or one HTTP
// session): same executable + arguments (or the same endpoint URL) + partition (the binder uses the
// tool's sandbox_ref as partition, since one process runs under one sandbox, and an HTTP session's
// requests go through that sandbox's network rules).
//
// - createMcpToolImpl(source, {pool, toolName}) → ToolImpl (kind 'mcp'; touchesOs: true for a stdio
//   server, a process we start; false for HTTP, reached by the runtime through the network guard).
//   Bad URIs fail here, synchronously (McpError 'config' for malformed or reserved mcp:// and for
//   http:// the runtime configuration does not allow, 'unsupported-transport' for unknown schemes),
//   so the registry can report them at STARTING.
// - The MCP tool called is `mcp_source.tool_name`, or the manifest Tool's own name when absent.
// - describe() → description + inputSchema (+ title, outputSchema, annotations when the server
//   gives them) from tools/list, for the registry to fill in what the manifest left out. Throws
//   McpError 'tool-not-found' (listing what the server offers) when the server lacks the tool.
// - run():
//     * result of tools/call → ToolResult (see toToolResult); `isError` carried over;
//     * the server does not list the tool, or answers tools/call with a JSON-RPC error → an
//       isError ToolResult with a clear text (the call reached the tool layer and was refused);
//     * ctx.signal aborted (timeout, shutdown) → throws McpError 'timeout'/'aborted' after the
//       server has been killed (see client.ts: no work of a timed-out tool survives);
//     * HTTP server unreachable or refusing our credentials → ProtocolError -32020 naming the server;
//       the network guard refusing → SandboxViolation (-32010); see gateError;
//     * server crash, spawn failure, version mismatch, protocol violation → throws McpError.
// - close() releases this tool's share of the client; the last one closes it. pool.closeAll()
//   stops every server (runtime shutdown).
import { SandboxViolation, type ContentBlock, type ToolImpl, type ToolResult, type ToolRunContext } from '../types.ts';
import type { McpBinder } from '../registry.ts';
import type { ResolvedPrimitive } from '../../manifest/resolved.ts';
import { ErrorCode, ProtocolError } from '../../protocol/errors.ts';
import { NetworkDenied } from '../../net/guarded-fetch.ts';
import { checkTarget, netPolicy } from '../../net/net-policy.ts';
import { netMode } from '../../sandbox/spec-view.ts';
import { McpClient, TOOL_INPUT_SCHEMA_MAX_CHARS, type McpCallResult, type McpCommonOptions, type McpSpawn, type McpStdioClientOptions, type McpTool } from './client.ts';
import { McpError } from './errors.ts';
import { httpTransport, type McpHttpRequest } from './http-channel.ts';
import { parseMcpUri, type McpHttpTarget, type McpTarget } from './uri.ts';
import type { Logger } from '../../kernel/ports.ts';
import { timerDelay } from '../../protocol/delay.ts';

export interface McpSource {
  uri: string;
  tool_name?: string;
}

/** How the pool reaches one Streamable HTTP server (the runtime builds it from its config and the sandbox). */
export interface McpHttpAccess {
  /** The network guard under the partition's sandbox rules. */
  request: McpHttpRequest;
  /** Authentication headers, resolved at each session start (secret_ref values). */
  headers?: () => Record<string, string> | Promise<Record<string, string>>;
  /** Set when this server may not be used (plain http:// not allowed, …): a config error at STARTING. */
  problem?: string;
}

/** Client options shared by every server of the pool (spawn, env, cwd, logger, limits). */
export interface McpPoolOptions extends McpCommonOptions, Pick<McpStdioClientOptions, 'env' | 'cwd' | 'stderrTailBytes'> {
  /** stdio servers: the spawner (for every partition unless spawnFor is given), env, cwd. */
  spawn?: McpSpawn;
  /**
   * The spawner for a partition (see acquire); when absent, `spawn` serves every partition.
   * Lets the runtime start each server inside the sandbox its tools declare.
   */
  spawnFor?: (partition: string) => McpSpawn;
  /** https:// (and loopback http://) servers; without it they are refused as 'unsupported-transport'. */
  http?: (target: McpHttpTarget, partition: string) => McpHttpAccess;
}

interface Entry {
  client: McpClient;
  refs: number;
}

/** Parse mcp_source.uri or throw the McpError describing why it cannot be used. */
export function mcpTargetOf(uri: string): McpTarget {
  const r = parseMcpUri(uri);
  if (r.ok) return r.target;
  throw new McpError(r.reason === 'unsupported-transport' ? 'unsupported-transport' : 'config', r.message);
}

export class McpPool {
  private readonly clients = new Map<string, Entry>();
  constructor(private readonly o: McpPoolOptions) {}

  /** Number of distinct servers in use. */
  get size(): number {
    return this.clients.size;
  }

  /**
   * The shared client for a server: same executable, same arguments and same `partition` → same
   * client (one process). The partition keeps servers apart that must not be shared, e.g. tools
   * with different sandbox_refs (a process runs under one sandbox). The last release closes it.
   */
  acquire(uri: string, partition = ''): { client: McpClient; target: McpTarget; release(): Promise<void> } {
    const target = mcpTargetOf(uri);
    const key = JSON.stringify(target.transport === 'stdio' ? [partition, target.command, target.args] : [partition, 'http', target.url]);
    let e = this.clients.get(key);
    if (!e) {
      e = { client: this.newClient(target, partition), refs: 0 };
      this.clients.set(key, e);
    }
    e.refs++;
    const entry = e;
    let released = false;
    return {
      client: entry.client,
      target,
      release: async () => {
        if (released) return;
        released = true;
        if (--entry.refs > 0) return;
        if (this.clients.get(key) === entry) this.clients.delete(key);
        await entry.client.close();
      },
    };
  }

  private newClient(target: McpTarget, partition: string): McpClient {
    const { spawnFor, spawn, env, cwd, stderrTailBytes, http, ...common } = this.o;
    if (target.transport === 'stdio') {
      const sp = spawnFor ? spawnFor(partition) : spawn;
      if (!sp) throw new McpError('unsupported-transport', `mcp_source.uri "${target.uri}": stdio MCP servers are not available in this runtime`);
      return new McpClient({ ...common, spawn: sp, env, cwd, stderrTailBytes, command: target.command, args: target.args, label: target.uri });
    }
    if (!http) throw new McpError('unsupported-transport', `mcp_source.uri "${target.uri}": MCP over HTTP is not available in this runtime`);
    const access = http(target, partition);
    if (access.problem) throw new McpError('config', access.problem);
    const transport = httpTransport({
      url: target.url,
      label: target.uri,
      request: access.request,
      headers: access.headers,
      logger: common.logger ?? { debug() {}, info() {}, warn() {}, error() {} },
      maxFrameBytes: common.maxFrameBytes ?? 8 * 1024 * 1024,
      sendTimeoutMs: common.requestTimeoutMs,
    });
    return new McpClient({ ...common, transport, label: target.uri });
  }

  async closeAll(): Promise<void> {
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(all.map((e) => e.client.close()));
  }
}

export interface McpToolDescription {
  description: string;
  inputSchema: Record<string, unknown>;
  title?: string;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** Why the server's inputSchema is not used (too large; client.ts TOOL_INPUT_SCHEMA_MAX_CHARS). */
  inputSchemaRefused?: string;
}

export interface McpToolImpl extends ToolImpl {
  kind: 'mcp';
  /** The MCP tool name called on the server. */
  readonly mcpToolName: string;
  readonly client: McpClient;
  /** From the server's tools/list (spec §5.4: fills a manifest's missing description/input_schema). */
  describe(opts?: { signal?: AbortSignal }): Promise<McpToolDescription>;
}

/**
 * @param deps.toolName the manifest Tool's name: the MCP tool name when source.tool_name is absent.
 * @param deps.partition see McpPool.acquire (the binder passes the tool's sandbox_ref).
 */
export function createMcpToolImpl(source: McpSource, deps: { pool: McpPool; toolName: string; partition?: string }): McpToolImpl {
  const { client, target, release } = deps.pool.acquire(source.uri, deps.partition);
  const name = source.tool_name ?? deps.toolName;
  const uri = source.uri;

  const notFound = (tools: McpTool[]) => `MCP server ${uri} has no tool "${name}"${tools.length ? ` (it offers: ${offered(tools)})` : ' (it lists no tools)'}`;

  return {
    kind: 'mcp',
    // A stdio server is a process we start; an HTTP server is reached by the runtime itself, through
    // the network guard (like http-fetch), so it is checked like an in-process builtin.
    touchesOs: target.transport === 'stdio',
    mcpToolName: name,
    client,
    async describe(opts = {}) {
      const tools = await client.listTools(opts);
      const t = tools.find((x) => x.name === name);
      if (!t) throw new McpError('tool-not-found', notFound(tools));
      const d: McpToolDescription = { description: t.description ?? t.title ?? '', inputSchema: t.inputSchema };
      if (t.inputSchemaOversize !== undefined) {
        d.inputSchemaRefused = `MCP server ${uri} gave tool ${JSON.stringify(name)} an input schema of ${t.inputSchemaOversize} characters, more than ${TOOL_INPUT_SCHEMA_MAX_CHARS}: declare input_schema in the manifest`;
      }
      if (t.title !== undefined) d.title = t.title;
      if (t.outputSchema !== undefined) d.outputSchema = t.outputSchema;
      if (t.annotations !== undefined) d.annotations = t.annotations;
      return d;
    },
    async run(args: Record<string, unknown>, ctx: ToolRunContext): Promise<ToolResult> {
      // The session is shared per sandbox_ref; a call's own (possibly narrowed) sandbox must allow the host too.
      if (target.transport === 'http' && ctx.sandbox) checkCallNetwork(target, ctx);
      try {
        const t = await client.findTool(name, { signal: ctx.signal });
        if (!t) return { content: [{ type: 'text', text: notFound(client.cachedTools() ?? []) }], isError: true };
        const res = await client.callTool(name, args, { signal: ctx.signal });
        return toToolResult(res);
      } catch (err) {
        if (err instanceof McpError && err.code === 'rpc') {
          return { content: [{ type: 'text', text: `MCP tool "${name}" on ${uri} failed: ${err.message}` }], isError: true };
        }
        throw gateError(err, deps.toolName, uri);
      }
    },
    close: release,
  };
}

/** MAX_NAMES_SAID: the not-found message is a tool result and a log line; the server chooses how many tools it lists. */
const MAX_NAMES_SAID = 20;

/** The first tool names a server lists, quoted as JSON (a name may hold a line break) and clipped. */
function offered(tools: McpTool[]): string {
  const names = tools.slice(0, MAX_NAMES_SAID).map((t) => JSON.stringify(t.name.length > 64 ? `${t.name.slice(0, 64)}…` : t.name));
  return tools.length > MAX_NAMES_SAID ? `${names.join(', ')} and ${tools.length - MAX_NAMES_SAID} more` : names.join(', ');
}

function checkCallNetwork(target: McpHttpTarget, ctx: ToolRunContext): void {
  try {
    checkTarget(target.url, netPolicy({ ...ctx.sandbox.capabilities?.network, mode: netMode(ctx.sandbox) }));
  } catch (e) {
    if (e instanceof NetworkDenied) throw new SandboxViolation(`network.${e.reason}`, `MCP server ${target.uri}: ${e.message}`);
    throw e;
  }
}

/**
 * MCP failures the gate answers as protocol errors (docs/tools.md "MCP over HTTP"): a server that
 * cannot be reached or refuses our credentials → -32020 naming the server (never a header value);
 * the sandbox refusing the request → -32010. Everything else is the tool failing (isError result).
 */
function gateError(err: unknown, tool: string, server: string): unknown {
  if (!(err instanceof McpError)) return err;
  if (err.code === 'unreachable' || err.code === 'auth') {
    return new ProtocolError(ErrorCode.ProviderUnavailable, `Tool unavailable: ${err.message}`, { tool, server, reason: err.code });
  }
  if (err.code === 'network-denied') {
    const reason = (err.data as { reason?: string } | undefined)?.reason ?? 'denied';
    return new SandboxViolation(`network.${reason}`, err.message);
  }
  return err;
}

/** A tool whose server was unreachable at STARTING and whose description/schema are therefore unknown. */
function unavailableImpl(impl: McpToolImpl, tool: string, server: string, why: string): McpToolImpl {
  return {
    ...impl,
    async run() {
      throw new ProtocolError(
        ErrorCode.ProviderUnavailable,
        `Tool unavailable: MCP server ${server} was unreachable at start (${why}), so the input schema of ${tool} is unknown; restart the agent once the server is up, or declare description and input_schema in the manifest`,
        { tool, server, reason: 'unreachable-at-start' },
      );
    },
  };
}

/** Delays between attempts to reach an HTTP server at STARTING (docs/tools.md "MCP over HTTP"). */
export const START_RETRY_DELAYS_MS = [500, 1000, 2000];

/**
 * The registry's McpBinder (src/tools/registry.ts) over a pool. Tools share a server process only
 * when they have the same mcp_source.uri and the same sandbox_ref (partition "sandbox:<ref>", or
 * "" without one: pair it with McpPoolOptions.spawnFor to start each under its sandbox).
 * bind() creates the tool's impl and,
 * when the manifest leaves out description or input_schema (spec §5.4: OPTIONAL with mcp_source),
 * starts the server and takes them from tools/list. With both given the server starts lazily, on
 * the first call (set `eager` to start and check every MCP tool at STARTING anyway).
 * close() stops every server of the pool.
 */
export function createMcpBinder(pool: McpPool, opts: { eager?: boolean; signal?: AbortSignal; logger?: Logger; retryDelaysMs?: number[] } = {}): McpBinder {
  const delays = opts.retryDelaysMs ?? START_RETRY_DELAYS_MS;
  // Servers already found down at this STARTING: their other tools do not wait through the retries again.
  const down = new Set<string>();
  return {
    async bind(t: ResolvedPrimitive) {
      const src = t.spec.mcp_source as McpSource;
      const partition = typeof t.spec.sandbox_ref === 'string' ? `sandbox:${t.spec.sandbox_ref}` : '';
      const impl = createMcpToolImpl(src, { pool, toolName: t.name, partition });
      const declared = t.spec.description !== undefined && t.spec.input_schema !== undefined;
      if (!opts.eager && declared) return { impl };
      for (let attempt = 0; ; attempt++) {
        try {
          const d = await impl.describe({ signal: opts.signal });
          // Only a schema the manifest leaves to the server must be usable; a declared one replaces it.
          if (d.inputSchemaRefused !== undefined && t.spec.input_schema === undefined) throw new McpError('protocol', d.inputSchemaRefused);
          return { impl, description: d.description, inputSchema: d.inputSchema };
        } catch (err) {
          // Only "cannot reach it (yet)" is survivable: a server that is up and wrong is a config error.
          if (!(err instanceof McpError && err.code === 'unreachable') || opts.signal?.aborted) {
            await impl.close?.();
            throw new McpError(err instanceof McpError ? err.code : 'protocol', `tool ${t.name}: ${(err as Error).message}`);
          }
          const key = JSON.stringify([partition, src.uri]);
          if (attempt < delays.length && !down.has(key)) {
            opts.logger?.warn('mcp server unreachable at start; retrying', { tool: t.name, server: src.uri, attempt: attempt + 1, retry_in_ms: delays[attempt], error: err.message });
            await new Promise((r) => setTimeout(r, timerDelay(delays[attempt])));
            continue;
          }
          down.add(key);
          opts.logger?.error('mcp server unreachable at start; the tool is unavailable', { tool: t.name, server: src.uri, error: err.message, lazy: declared });
          // With description and input_schema declared, the tool stays callable: the server is tried again on each call.
          if (declared) return { impl };
          return { impl: unavailableImpl(impl, t.name, src.uri, err.message), description: '', inputSchema: { type: 'object' } };
        }
      }
    },
    close: () => pool.closeAll(),
  };
}

/**
 * MCP CallToolResult → our ToolResult.
 * - text, image: kept as they are (annotations/_meta dropped).
 * - resource (embedded resource): kept; `resource` is passed through.
 * - resource_link (MCP 2025-06-18): becomes a `resource` block holding the link's fields
 *   (uri, name, title, description, mimeType, size): the data is not fetched.
 * - audio (no such block in CKP §9.3.2): a text block saying audio was omitted, with its type/size.
 * - anything else: a text block naming the unsupported type.
 * - structuredContent: MCP asks servers to mirror it as text; when content is empty we add that
 *   text block ourselves (JSON), otherwise it is dropped (ToolResult has no such field).
 */
export function toToolResult(res: McpCallResult): ToolResult {
  const content: ContentBlock[] = [];
  for (const b of res.content) content.push(toBlock(b));
  if (content.length === 0 && res.structuredContent !== undefined) content.push({ type: 'text', text: JSON.stringify(res.structuredContent) });
  return res.isError ? { content, isError: true } : { content };
}

function toBlock(b: Record<string, unknown>): ContentBlock {
  switch (b.type) {
    case 'text':
      if (typeof b.text === 'string') return { type: 'text', text: b.text };
      break;
    case 'image':
      if (typeof b.data === 'string' && typeof b.mimeType === 'string') return { type: 'image', data: b.data, mimeType: b.mimeType };
      break;
    case 'resource':
      if (typeof b.resource === 'object' && b.resource !== null && !Array.isArray(b.resource)) return { type: 'resource', resource: b.resource as Record<string, unknown> };
      break;
    case 'resource_link': {
      if (typeof b.uri !== 'string') break;
      const resource: Record<string, unknown> = { uri: b.uri };
      for (const k of ['name', 'title', 'description', 'mimeType', 'size']) if (b[k] !== undefined) resource[k] = b[k];
      return { type: 'resource', resource };
    }
    case 'audio': {
      const mime = typeof b.mimeType === 'string' ? b.mimeType : 'unknown type';
      const size = typeof b.data === 'string' ? `, ${Math.floor((b.data.length * 3) / 4)} bytes` : '';
      return { type: 'text', text: `[audio content omitted (${mime}${size}): claw-edge tool results carry text, image and resource blocks]` };
    }
    default:
      return { type: 'text', text: `[unsupported MCP content type "${String(b.type)}" omitted]` };
  }
  return { type: 'text', text: `[malformed MCP "${String(b.type)}" content block omitted]` };
}
