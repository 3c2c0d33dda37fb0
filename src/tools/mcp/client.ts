// A small MCP client, written for the tools feature only: initialize / notifications/initialized,
// tools/list, tools/call, cancellation. One core (this file: ids, handshake, tools, timeouts) over a
// channel (channel.ts) from one of two transports of the MCP spec: stdio (stdio-channel.ts, a child
// process started through an INJECTED spawn so the runtime can sandbox it) or Streamable HTTP
// (http-channel.ts, through the network guard). A channel is one session: a server process, or an
// HTTP session (Mcp-Session-Id).
//
// Lifecycle (documented behaviour):
// - Lazy start: the first request opens a session and performs the handshake: `initialize`
//   with the newest protocol version we speak, the server's answer must be one we speak (else
//   McpError 'version' and the session is stopped), then `notifications/initialized`.
// - One session per client, shared by all concurrent requests (JSON-RPC multiplexing).
// - Timeout or abort of a request that is in flight: we send `notifications/cancelled`
//   {requestId, reason} (never for `initialize`, which MCP forbids cancelling). stdio: then we stop
//   the whole server, since the runtime requires that no work of a timed-out tool survives and a
//   stdio server is shared, so killing it (its process group) is the only sure way; every other
//   request pending on it fails with McpError 'stopped', and the rejection of the timed-out request
//   is delivered after the kill has completed. HTTP: the request's exchange is aborted and the
//   session goes on (the server is not ours to kill; the cancellation is its cue).
// - After the session stopped or crashed, the client is "idle" again: the next request
//   transparently opens a new one and redoes the handshake (lazy restart). Requests are never
//   retried by us — a tools/call pending when the server died fails (McpError 'crashed') — with one
//   exception: a request the HTTP server refused because it forgot the session ('session-expired',
//   it was not processed) is sent once more on a new session.
// - close(): no restart afterwards; the channel's orderly shutdown (stdio: close stdin, wait
//   closeGraceMs, kill the group; HTTP: DELETE the session).
// - Strict about ids: we only send integer ids; a response whose id is not one we are waiting
//   for (unknown, already answered, or the right number as a string) is logged and dropped.
//   A response that is malformed but carries a pending id fails that request.
// - Server→client requests: `ping` → {}. `roots/list`, `sampling/createMessage`,
//   `elicitation/create` and anything else → JSON-RPC -32601 (we declare none of those client
//   capabilities). Server notifications are logged (notifications/message at the level it maps
//   to, the rest at debug; 60 lines a minute per session, data clipped); notifications/tools/list_changed drops
//   our cached tool list.
import type { Logger } from '../../kernel/ports.ts';
import { classify } from '../../protocol/jsonrpc.ts';
import type { McpChannel, McpChannelHooks, McpTransport } from './channel.ts';
import { McpError } from './errors.ts';
import { stdioTransport, type McpSpawn } from './stdio-channel.ts';
import { timerDelay } from '../../protocol/delay.ts';
import { LineWindow } from '../../log/line-window.ts';

export type { McpProcess, McpSpawn } from './stdio-channel.ts';

/** MCP protocol revisions we speak, newest first. We send the first one in `initialize`. */
export const MCP_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

/** What every client takes, whatever its transport (the pool passes these on to each client it makes). */
export interface McpCommonOptions {
  /** Our version for clientInfo {name: 'claw-edge', version}. */
  clientVersion: string;
  logger?: Logger;
  /** Largest accepted message from the server, in bytes (default 8 MiB). */
  maxFrameBytes?: number;
  /** Start (spawn or connect) + initialize must finish within this (default 30 s). */
  startTimeoutMs?: number;
  /** Default timeout of tools/list (default 30 s). tools/call has none by default: use timeoutMs/signal. */
  requestTimeoutMs?: number;
  /** close(): how long to wait for the server to exit after stdin is closed / for the DELETE (default 2 s). */
  closeGraceMs?: number;
}

/** A server over stdio: the client spawns it. */
export interface McpStdioClientOptions extends McpCommonOptions {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  spawn: McpSpawn;
  /** How the server is named in messages and logs (default: the command). */
  label?: string;
  /** Characters of server stderr kept for error messages (default 4096). */
  stderrTailBytes?: number;
}

/** A server over another transport (Streamable HTTP: http-channel.ts). */
export interface McpTransportClientOptions extends McpCommonOptions {
  transport: McpTransport;
  label: string;
}

export type McpClientOptions = McpStdioClientOptions | McpTransportClientOptions;

export interface McpServerInfo {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  serverInfo: { name?: string; version?: string; [k: string]: unknown };
  instructions?: string;
}

export interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /**
   * Characters of the server's inputSchema when it was longer than TOOL_INPUT_SCHEMA_MAX_CHARS. It is
   * then not kept (inputSchema is `{type: 'object'}`) and the backend refuses to describe the tool with it.
   */
  inputSchemaOversize?: number;
  /** The server's outputSchema or annotations that were longer than their bound, and so not kept. */
  notKept?: Array<'outputSchema' | 'annotations'>;
}

export interface McpCallResult {
  /** Content blocks exactly as the server sent them (validated to be objects with a string type). */
  content: Record<string, unknown>[];
  isError: boolean;
  structuredContent?: unknown;
}

export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

const noopLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const clip = (s: string, n = 200) => (s.length > n ? `${s.slice(0, n)}…` : s);
const MAX_PAGES = 1000;
/**
 * Bounds of one whole tools/list, across all its pages. MCP pagination (spec "Utilities / Pagination")
 * lets the server choose page size and cursors, so the page count alone bounds nothing: 1000 pages
 * of up to maxFrameBytes each would be gigabytes on a 256 MB board. The tools are kept (and described
 * to the model), so their sum is what must fit.
 */
export const TOOLS_LIST_MAX_TOOLS = 4096;
/** Characters of JSON of the tools kept from one tools/list (entries as the server sent them). */
export const TOOLS_LIST_MAX_CHARS = 4 * 1024 * 1024;
/**
 * A description (or title) longer than this is clipped, with a marker saying so. It is sent to the
 * model on every turn when the manifest gives none (spec §5.4 takes it from tools/list), and MCP puts
 * no bound on it; 4 KiB is ample for what a tool does and how to call it.
 */
export const TOOL_DESCRIPTION_MAX_CHARS = 4096;
/**
 * An inputSchema whose JSON is longer than this is not kept: a clipped schema would be a different
 * schema, so the tool is refused where the schema is needed (backend.ts) rather than sent to the model.
 */
export const TOOL_INPUT_SCHEMA_MAX_CHARS = 64 * 1024;
/** An outputSchema longer than this (JSON characters) is not kept: nothing here needs it, so the tool stays usable. */
export const TOOL_OUTPUT_SCHEMA_MAX_CHARS = TOOL_INPUT_SCHEMA_MAX_CHARS;
/** Annotations longer than this are not kept: MCP's are a few hints (readOnlyHint, title, ...), and untrusted ones. */
export const TOOL_ANNOTATIONS_MAX_CHARS = 4096;
/** Log lines what a server sends may cause per minute (its log notifications, stray ids, invalid messages). */
const SERVER_LINES_PER_MINUTE = 60;

function abortReason(signal: AbortSignal): { code: 'timeout' | 'aborted'; text: string } {
  const r: unknown = signal.reason;
  const isTimeout = isObj(r) && (r as { name?: unknown }).name === 'TimeoutError';
  const text = r instanceof Error || (isObj(r) && typeof r.message === 'string') ? String((r as { message: string }).message) : typeof r === 'string' ? r : 'aborted';
  return { code: isTimeout ? 'timeout' : 'aborted', text };
}

interface Pending {
  what: string;
  resolve(v: unknown): void;
  reject(e: McpError): void;
}

/** One session (a server process, or an HTTP session) and its JSON-RPC bookkeeping. Dead for good once stopped. */
class Connection {
  readonly pending = new Map<number, Pending>();
  private nextId = 1;
  dead: McpError | undefined;
  private stopPromise: Promise<void> | undefined;
  info: McpServerInfo | undefined;
  /** Bumped by notifications/tools/list_changed. */
  toolsEpoch = 0;
  toolsCache: { epoch: number; tools: McpTool[] } | undefined;
  channel!: McpChannel;
  private readonly lines = new LineWindow(SERVER_LINES_PER_MINUTE, 60_000);

  constructor(private readonly o: { label: string; logger: Logger; onDead: (c: Connection) => void }) {}

  /** The hooks the channel reports to (wired before the channel exists, so nothing is missed). */
  readonly hooks: McpChannelHooks = {
    onMessage: (m) => this.onInbound(m),
    onRequestFailed: (id, err) => {
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      p.reject(err);
      // The server forgot the session: nothing more can be sent on it (the client opens a new one).
      if (err.code === 'session-expired') this.expire();
    },
    onClosed: (errFor) => {
      if (this.dead) return;
      void this.stop((p) => errFor(p.what), errFor(undefined));
    },
    isPending: (id) => this.pending.has(id),
  };

  /** The server forgot this session: fail what is still pending on it, but do not retry (it may have run). */
  private expire(): void {
    const why = (p: Pending) => new McpError('crashed', `MCP server ${this.o.label} ended the session while ${p.what} was pending`);
    void this.stop(why, new McpError('session-expired', `MCP server ${this.o.label} ended the session`));
  }

  /** "; server stderr: ..." for error messages, or ''. */
  stderrNote(): string {
    return this.channel?.note() ?? '';
  }

  /** Resolves once the server is gone (immediately when it was never stopped). */
  get stopped(): Promise<void> {
    return this.stopPromise ?? Promise.resolve();
  }

  /**
   * Stop the session now (stdio: kill the process group), then fail all pending requests with
   * errFor(pending). Idempotent. Resolves once the session is gone.
   */
  stop(errFor: (p: Pending) => McpError, reason: McpError): Promise<void> {
    return this.finish(reason, errFor, () => this.channel?.kill() ?? Promise.resolve());
  }

  /** Orderly shutdown (stdio: close stdin, wait, kill; HTTP: DELETE the session). */
  close(graceMs: number, err: McpError): Promise<void> {
    return this.finish(err, () => err, () => this.channel?.close(graceMs) ?? Promise.resolve());
  }

  private finish(reason: McpError, errFor: (p: Pending) => McpError, end: () => Promise<void>): Promise<void> {
    if (this.stopPromise) return this.stopPromise;
    if (!this.dead) this.dead = reason;
    this.stopPromise = (async () => {
      await end();
      const all = [...this.pending.values()];
      this.pending.clear();
      for (const p of all) p.reject(errFor(p));
    })();
    this.o.onDead(this);
    return this.stopPromise;
  }

  private write(msg: unknown): void {
    if (this.dead) return;
    this.channel.send(msg);
  }

  notify(method: string, params?: unknown): void {
    this.write(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  /**
   * Send a request. On timeout/abort while in flight: notifications/cancelled (when cancellable),
   * then either stop the server (stdio) or abandon this request's exchange (HTTP), then reject with
   * McpError 'timeout'/'aborted'.
   */
  request(method: string, params: unknown, what: string, opts: RequestOptions & { cancellable: boolean }): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const { signal, timeoutMs } = opts;
    if (signal?.aborted) {
      const r = abortReason(signal);
      return Promise.reject(new McpError(r.code, `MCP ${what} on ${this.o.label} was aborted before it was sent: ${r.text}`));
    }
    const id = this.nextId++;
    const stops = this.channel.stopOnCancel || !opts.cancellable;
    const after = stops ? 'the server was stopped and will be restarted on next use' : 'the request was cancelled';
    return new Promise<unknown>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const cleanup = () => {
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const giveUp = (err: McpError, reasonText: string) => {
        if (!this.pending.has(id)) return;
        this.pending.delete(id);
        cleanup();
        if (opts.cancellable) this.notify('notifications/cancelled', { requestId: id, reason: reasonText });
        this.channel.abandon(id);
        if (!stops) {
          reject(err);
          return;
        }
        const why = new McpError('stopped', `MCP server ${this.o.label} was stopped because ${what} (request ${id}) ${err.code === 'timeout' ? 'timed out' : 'was aborted'}; it will be restarted on next use`);
        void this.stop(() => why, why).then(() => reject(err));
      };
      const onAbort = () => {
        const r = abortReason(signal!);
        giveUp(new McpError(r.code, `MCP ${what} on ${this.o.label} ${r.code === 'timeout' ? 'timed out' : 'was aborted'} (${r.text}); ${after}`), r.text);
      };
      this.pending.set(id, {
        what,
        resolve: (v) => {
          cleanup();
          resolve(v);
        },
        reject: (e) => {
          cleanup();
          reject(e);
        },
      });
      if (timeoutMs !== undefined && timeoutMs > 0) {
        timer = setTimeout(() => giveUp(new McpError('timeout', `MCP ${what} on ${this.o.label} timed out after ${timeoutMs} ms; ${after}`), `timed out after ${timeoutMs} ms`), timerDelay(timeoutMs));
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.write(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    });
  }

  /**
   * A line caused by what the server sent: past SERVER_LINES_PER_MINUTE, one line says the rest of the minute is
   * dropped. A chatty or hostile server must not fill the disk, nor hold the event loop on a full log pipe.
   */
  private serverLog(level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown>): void {
    if (this.lines.admit()) this.o.logger[level](msg, fields);
    else if (this.lines.firstRefusedInWindow) this.o.logger.warn('mcp server logs too much: its lines are dropped for the rest of the minute', { server: this.o.label, per_minute: SERVER_LINES_PER_MINUTE });
  }

  // ---- inbound ----

  private onInbound(msg: unknown): void {
    if (this.dead) return;
    if (Array.isArray(msg)) {
      // JSON-RPC batches (MCP 2025-03-26 allowed them): handle each, answer requests in one batch.
      const replies: unknown[] = [];
      for (const m of msg) this.onMessage(m, replies);
      if (replies.length > 0) this.write(replies);
      return;
    }
    this.onMessage(msg, undefined);
  }

  private onMessage(x: unknown, batch: unknown[] | undefined): void {
    const reply = (m: unknown) => (batch ? batch.push(m) : this.write(m));
    const c = classify(x);
    switch (c.type) {
      case 'response': {
        const { id } = c.msg;
        const p = typeof id === 'number' ? this.pending.get(id) : undefined;
        if (!p) {
          this.serverLog('warn', 'mcp server sent a response with an id we are not waiting for (ignored)', { server: this.o.label, id: clip(JSON.stringify(id)) });
          return;
        }
        this.pending.delete(id as number);
        if ('error' in c.msg) {
          const e = c.msg.error;
          // The server's message is quoted in a sentence for logs and tool results: clipped, like every line it causes.
          p.reject(new McpError('rpc', `MCP server ${this.o.label} answered ${p.what} with error ${e.code}: ${clip(e.message, 1000)}`, { rpcCode: e.code, data: e.data }));
        } else {
          p.resolve(c.msg.result);
        }
        return;
      }
      case 'request': {
        const { id, method } = c.msg;
        if (method === 'ping') {
          reply({ jsonrpc: '2.0', id, result: {} });
          return;
        }
        this.serverLog('debug', 'mcp server request not supported', { server: this.o.label, method });
        reply({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: claw-edge does not support ${method} (no such client capability was declared)` } });
        return;
      }
      case 'notification':
        this.onNotification(c.msg.method, c.msg.params);
        return;
      case 'invalid': {
        // A malformed message that names one of our pending ids is that request's answer: fail it.
        const id = isObj(x) ? x.id : undefined;
        const p = typeof id === 'number' && !('method' in (x as object)) ? this.pending.get(id) : undefined;
        if (p) {
          this.pending.delete(id as number);
          p.reject(new McpError('protocol', `MCP server ${this.o.label} sent a malformed response to ${p.what}: ${c.reason}`));
          return;
        }
        this.serverLog('warn', 'mcp server sent an invalid JSON-RPC message (ignored)', { server: this.o.label, reason: c.reason });
        if (isObj(x) && typeof x.method === 'string' && 'id' in x) {
          reply({ jsonrpc: '2.0', id: c.id, error: { code: -32600, message: `Invalid request: ${c.reason}` } });
        }
        return;
      }
    }
  }

  private onNotification(method: string, params: unknown): void {
    const { label } = this.o;
    if (method === 'notifications/tools/list_changed') {
      this.toolsEpoch++;
      this.toolsCache = undefined;
      this.serverLog('debug', 'mcp server tool list changed', { server: label });
      return;
    }
    if (method === 'notifications/message' && isObj(params)) {
      // MCP log levels (RFC 5424 names) → ours.
      const lvl = String(params.level);
      const data = JSON.stringify(params.data) ?? '';
      const fields = { server: label, logger: clip(String(params.logger ?? '')), data: data.length > 1000 ? clip(data, 1000) : params.data };
      this.serverLog(lvl === 'debug' ? 'debug' : lvl === 'info' || lvl === 'notice' ? 'info' : lvl === 'warning' ? 'warn' : 'error', 'mcp server log', fields);
      return;
    }
    this.serverLog('debug', 'mcp server notification', { server: label, method: clip(method) });
  }
}

export class McpClient {
  private conn: Connection | undefined;
  private starting: Promise<Connection> | undefined;
  private lastStop: Promise<void> = Promise.resolve();
  private closed = false;
  private starts = 0;
  private readonly label: string;
  private readonly logger: Logger;
  private readonly transport: McpTransport;

  constructor(private readonly o: McpClientOptions) {
    this.logger = o.logger ?? noopLogger;
    if ('transport' in o) {
      this.label = o.label;
      this.transport = o.transport;
    } else {
      this.label = o.label ?? o.command;
      this.transport = stdioTransport({
        command: o.command,
        args: o.args,
        env: o.env,
        cwd: o.cwd,
        spawn: o.spawn,
        label: this.label,
        logger: this.logger,
        maxFrameBytes: o.maxFrameBytes ?? 8 * 1024 * 1024,
        stderrTailBytes: o.stderrTailBytes ?? 4096,
      });
    }
  }

  /** How many times a server process was started (1 after the first use; +1 per restart). */
  get generation(): number {
    return this.starts;
  }
  /** pid of the running server, if any. */
  get pid(): number | undefined {
    return this.conn?.dead ? undefined : this.conn?.channel.pid;
  }
  /** initialize result of the running server, if any. */
  get serverInfo(): McpServerInfo | undefined {
    return this.conn?.dead ? undefined : this.conn?.info;
  }

  /** Start the server now (otherwise the first request does). Returns the initialize result. */
  async start(opts: { signal?: AbortSignal } = {}): Promise<McpServerInfo> {
    return (await this.connection(opts.signal)).info!;
  }

  async listTools(opts: RequestOptions = {}): Promise<McpTool[]> {
    return this.onSession(() => this.listToolsOnce(opts));
  }

  private async listToolsOnce(opts: RequestOptions): Promise<McpTool[]> {
    const conn = await this.connection(opts.signal);
    const epoch = conn.toolsEpoch;
    const tools: McpTool[] = [];
    const seen = new Set<string>();
    // One line per listing, not one per malformed tool: 20,000 of them were 20,000 warn lines.
    let malformed = 0;
    let firstMalformed: unknown;
    const oversize: McpTool[] = [];
    const unkept: McpTool[] = [];
    let cursor: string | undefined;
    const budget = { entries: 0, chars: 0 };
    for (let page = 0; ; page++) {
      if (page >= MAX_PAGES) throw new McpError('protocol', `MCP server ${this.label} returned more than ${MAX_PAGES} pages from tools/list`);
      const res = await conn.request('tools/list', cursor === undefined ? {} : { cursor }, 'tools/list', {
        signal: opts.signal,
        timeoutMs: opts.timeoutMs ?? this.o.requestTimeoutMs ?? 30_000,
        cancellable: true,
      });
      if (!isObj(res) || !Array.isArray(res.tools)) throw new McpError('protocol', `MCP server ${this.label} answered tools/list without a tools array`);
      for (const t of res.tools) {
        this.chargeListing(budget, 1, 0);
        const tool = toTool(t);
        if (!tool) {
          if (malformed++ === 0) firstMalformed = t;
          continue;
        }
        this.chargeListing(budget, 0, JSON.stringify(t).length);
        if (tool.inputSchemaOversize !== undefined) oversize.push(tool);
        if (tool.notKept !== undefined) unkept.push(tool);
        tools.push(tool);
      }
      if (res.nextCursor === undefined || res.nextCursor === null) break;
      if (typeof res.nextCursor !== 'string') throw new McpError('protocol', `MCP server ${this.label} answered tools/list with a non-string nextCursor`);
      if (seen.has(res.nextCursor)) throw new McpError('protocol', `MCP server ${this.label} repeated tools/list cursor ${JSON.stringify(res.nextCursor)}`);
      seen.add(res.nextCursor);
      cursor = res.nextCursor;
    }
    if (malformed > 0) this.logger.warn('mcp server listed malformed tools (skipped)', { server: this.label, count: malformed, first: clip(JSON.stringify(firstMalformed) ?? '') });
    this.warnListed('mcp server listed tools with an oversize input schema (not kept; such a tool needs input_schema in its manifest)', oversize, (t) => ({
      chars: t.inputSchemaOversize,
      limit: TOOL_INPUT_SCHEMA_MAX_CHARS,
    }));
    this.warnListed('mcp server listed tools with an oversize output schema or annotations (not kept)', unkept, (t) => ({
      fields: t.notKept,
      limits: { outputSchema: TOOL_OUTPUT_SCHEMA_MAX_CHARS, annotations: TOOL_ANNOTATIONS_MAX_CHARS },
    }));
    if (conn.toolsEpoch === epoch) conn.toolsCache = { epoch, tools };
    return tools;
  }

  /** One warn line per listing for the tools `list` holds, naming the first (its name clipped: the server chose it). */
  private warnListed(msg: string, list: McpTool[], detail: (first: McpTool) => Record<string, unknown>): void {
    if (list.length > 0) this.logger.warn(msg, { server: this.label, count: list.length, first: clip(list[0].name), ...detail(list[0]) });
  }

  /** Count entries and kept characters of one tools/list against its bounds; refuse the listing past them. */
  private chargeListing(budget: { entries: number; chars: number }, entries: number, chars: number): void {
    budget.entries += entries;
    budget.chars += chars;
    if (budget.entries > TOOLS_LIST_MAX_TOOLS) {
      throw new McpError('protocol', `MCP server ${this.label} listed more than ${TOOLS_LIST_MAX_TOOLS} tools in tools/list (all pages together)`);
    }
    if (budget.chars > TOOLS_LIST_MAX_CHARS) {
      throw new McpError('protocol', `MCP server ${this.label} listed more than ${TOOLS_LIST_MAX_CHARS} characters of tool definitions in tools/list (all pages together)`);
    }
  }

  /** The named tool from the (cached) tools/list of the running server, or undefined. */
  async findTool(name: string, opts: RequestOptions = {}): Promise<McpTool | undefined> {
    const conn = await this.connection(opts.signal);
    const cached = conn.toolsCache && conn.toolsCache.epoch === conn.toolsEpoch ? conn.toolsCache.tools : await this.listTools(opts);
    return cached.find((t) => t.name === name);
  }

  /** Tools of the last successful tools/list of the running server (no request). */
  cachedTools(): McpTool[] | undefined {
    const c = this.conn;
    return c && !c.dead && c.toolsCache && c.toolsCache.epoch === c.toolsEpoch ? c.toolsCache.tools : undefined;
  }

  async callTool(name: string, args: Record<string, unknown>, opts: RequestOptions = {}): Promise<McpCallResult> {
    const what = `tools/call "${name}"`;
    const res = await this.onSession(async () => (await this.connection(opts.signal)).request('tools/call', { name, arguments: args }, what, { signal: opts.signal, timeoutMs: opts.timeoutMs, cancellable: true }));
    if (!isObj(res)) throw new McpError('protocol', `MCP server ${this.label} answered ${what} with a result that is not an object`);
    let content: Record<string, unknown>[] = [];
    if (Array.isArray(res.content)) {
      content = res.content.filter((b): b is Record<string, unknown> => isObj(b) && typeof b.type === 'string');
      if (content.length !== res.content.length) this.logger.warn('mcp server returned malformed content blocks (dropped)', { server: this.label, tool: name });
    } else if (res.content !== undefined || res.structuredContent === undefined) {
      throw new McpError('protocol', `MCP server ${this.label} answered ${what} without a content array`);
    }
    const out: McpCallResult = { content, isError: res.isError === true };
    if (res.structuredContent !== undefined) out.structuredContent = res.structuredContent;
    return out;
  }

  /** Stop for good: no restart afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const conn = this.conn ?? (await this.starting?.catch(() => undefined));
    this.conn = undefined;
    if (conn) {
      await conn.close(this.o.closeGraceMs ?? 2000, new McpError('closed', `MCP client for ${this.label} was closed`));
    }
    await this.lastStop;
  }

  // ---- session management ----

  /**
   * Run `fn` on the current session; when the server answers that it no longer knows the session
   * (HTTP 404, see http-channel.ts), the request was not processed: open a new session (initialize
   * again) and run it once more.
   */
  private async onSession<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof McpError && err.code === 'session-expired')) throw err;
      this.logger.info('mcp session ended by the server; initializing a new one', { server: this.label });
      return await fn();
    }
  }

  private async connection(signal?: AbortSignal): Promise<Connection> {
    if (this.closed) throw new McpError('closed', `MCP client for ${this.label} is closed`);
    if (this.conn && !this.conn.dead) return this.conn;
    if (!this.starting) {
      this.starting = this.startConnection().finally(() => {
        this.starting = undefined;
      });
    }
    const p = this.starting;
    if (!signal) return p;
    // An abort while waiting for the start stops this caller only; the start itself (bounded by
    // startTimeoutMs) goes on, since no tool work has begun yet.
    if (signal.aborted) throw new McpError(abortReason(signal).code, `MCP request on ${this.label} was aborted before the server was ready`);
    return await new Promise<Connection>((resolve, reject) => {
      const onAbort = () => reject(new McpError(abortReason(signal).code, `MCP request on ${this.label} was aborted before the server was ready: ${abortReason(signal).text}`));
      signal.addEventListener('abort', onAbort, { once: true });
      p.then(
        (c) => {
          signal.removeEventListener('abort', onAbort);
          resolve(c);
        },
        (e) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      );
    });
  }

  private async startConnection(): Promise<Connection> {
    // Never run two generations of the server at once: the previous one must be gone.
    await this.lastStop;
    if (this.closed) throw new McpError('closed', `MCP client for ${this.label} is closed`);
    this.starts++;
    const conn = new Connection({
      label: this.label,
      logger: this.logger,
      onDead: (c) => {
        if (this.conn === c) this.conn = undefined;
        this.lastStop = c.stopped;
      },
    });
    conn.channel = await this.transport.open(conn.hooks);
    try {
      const res = await conn.request(
        'initialize',
        { protocolVersion: MCP_PROTOCOL_VERSIONS[0], capabilities: {}, clientInfo: { name: 'claw-edge', version: this.o.clientVersion } },
        'initialize',
        { timeoutMs: this.o.startTimeoutMs ?? 30_000, cancellable: false },
      );
      if (!isObj(res) || typeof res.protocolVersion !== 'string' || !isObj(res.capabilities)) {
        throw new McpError('protocol', `MCP server ${this.label} answered initialize without protocolVersion/capabilities${conn.stderrNote()}`);
      }
      if (!(MCP_PROTOCOL_VERSIONS as readonly string[]).includes(res.protocolVersion)) {
        throw new McpError(
          'version',
          `MCP server ${this.label} wants protocol version ${JSON.stringify(res.protocolVersion)}; claw-edge speaks ${MCP_PROTOCOL_VERSIONS.join(', ')}`,
        );
      }
      conn.info = {
        protocolVersion: res.protocolVersion,
        capabilities: res.capabilities,
        serverInfo: isObj(res.serverInfo) ? res.serverInfo : {},
        ...(typeof res.instructions === 'string' ? { instructions: res.instructions } : {}),
      };
      conn.channel.negotiated(res.protocolVersion);
      conn.notify('notifications/initialized');
      if (this.closed) throw new McpError('closed', `MCP client for ${this.label} was closed during start`);
      this.conn = conn;
      // serverInfo is the server's to fill: only its name and version are logged, clipped (a 2 MB name was a 2 MB line).
      const { name, version } = conn.info.serverInfo;
      this.logger.info('mcp server ready', { server: this.label, protocolVersion: res.protocolVersion, serverInfo: { name: clip(String(name ?? '')), version: clip(String(version ?? '')) } });
      return conn;
    } catch (err) {
      const e = err instanceof McpError ? err : new McpError('protocol', String((err as Error)?.message ?? err));
      await conn.stop(() => e, e);
      throw e;
    }
  }
}

/** `s` cut to `max` characters, the cut said in the text itself so the model does not take it for the whole. */
export function clipText(s: string, max: number): string {
  if (s.length <= max) return s;
  return `${s.slice(0, max)}… [clipped by claw-edge: ${s.length - max} more characters]`;
}

function toTool(t: unknown): McpTool | undefined {
  if (!isObj(t) || typeof t.name !== 'string' || t.name === '') return undefined;
  const tool: McpTool = { name: t.name, inputSchema: { type: 'object' } };
  if (isObj(t.inputSchema)) {
    const chars = JSON.stringify(t.inputSchema).length;
    if (chars > TOOL_INPUT_SCHEMA_MAX_CHARS) tool.inputSchemaOversize = chars;
    else tool.inputSchema = t.inputSchema;
  }
  if (typeof t.title === 'string') tool.title = clipText(t.title, TOOL_DESCRIPTION_MAX_CHARS);
  if (typeof t.description === 'string') tool.description = clipText(t.description, TOOL_DESCRIPTION_MAX_CHARS);
  const keep = (field: 'outputSchema' | 'annotations', max: number): void => {
    const v = t[field];
    if (!isObj(v)) return;
    if (JSON.stringify(v).length <= max) tool[field] = v;
    else (tool.notKept ??= []).push(field);
  };
  keep('outputSchema', TOOL_OUTPUT_SCHEMA_MAX_CHARS);
  keep('annotations', TOOL_ANNOTATIONS_MAX_CHARS);
  return tool;
}
