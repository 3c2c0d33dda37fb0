// A small MCP client over a child process's stdio (MCP "stdio" transport: newline-delimited
// JSON-RPC 2.0, one message per line, server diagnostics on stderr). Written for the tools
// feature only: initialize / notifications/initialized, tools/list, tools/call, cancellation.
// The process is started through an INJECTED spawn function so the runtime can run the server
// inside its sandbox (node-spawn.ts has the plain node:child_process adapter).
//
// Lifecycle (documented behaviour):
// - Lazy start: the first request spawns the server and performs the handshake: `initialize`
//   with the newest protocol version we speak, the server's answer must be one we speak (else
//   McpError 'version' and the server is stopped), then `notifications/initialized`.
// - One server process per client, shared by all concurrent requests (JSON-RPC multiplexing).
// - Timeout or abort of a request that is in flight: we send `notifications/cancelled`
//   {requestId, reason} (never for `initialize`, which MCP forbids cancelling), then stop the
//   whole server: the runtime requires that no work of a timed-out tool survives, and a stdio
//   server is shared, so killing it (its process group, via the injected kill) is the only sure
//   way. Every other request pending on that server fails with McpError 'stopped'. The rejection
//   of the timed-out request is delivered after the kill has completed.
// - After the server stopped or crashed, the client is "idle" again: the next request
//   transparently spawns a new server and redoes the handshake (lazy restart). Requests are never
//   retried by us: a tools/call that was pending when the server died fails (McpError 'crashed').
//   After an unexpected exit the process group is killed too (children the server left behind).
// - close(): no restart afterwards. Closes stdin, waits closeGraceMs for the server to exit
//   (MCP stdio shutdown), then kills the process group anyway.
// - Strict about ids: we only send integer ids; a response whose id is not one we are waiting
//   for (unknown, already answered, or the right number as a string) is logged and dropped.
//   A response that is malformed but carries a pending id fails that request.
// - Lines on stdout that are not JSON (a chatty server printing banners) or not UTF-8 are logged
//   (the first few per server) and ignored. A frame over maxFrameBytes is a protocol violation:
//   we cannot tell which request it answered, so the server is stopped and all pending requests
//   fail with McpError 'protocol'.
// - Server→client requests: `ping` → {}. `roots/list`, `sampling/createMessage`,
//   `elicitation/create` and anything else → JSON-RPC -32601 (we declare none of those client
//   capabilities). Server notifications are logged (notifications/message at the level it maps
//   to, the rest at debug); notifications/tools/list_changed drops our cached tool list.
// - Server stderr: the last stderrTailBytes characters are kept and appended to error messages
//   about that server; each line is also logged at debug.
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../../kernel/ports.ts';
import { NdjsonDecoder, encodeFrame } from '../../protocol/framing.ts';
import { classify } from '../../protocol/jsonrpc.ts';
import { McpError } from './errors.ts';
import { timerDelay } from '../../protocol/delay.ts';

/** MCP protocol revisions we speak, newest first. We send the first one in `initialize`. */
export const MCP_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

export interface McpProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** For diagnostics and tests; the process-group id when the spawner made the child a group leader. */
  readonly pid?: number;
  /** Kill the server and everything it started (its process group); resolves once they are gone. */
  kill(): Promise<void>;
  /** Resolves when the server process has exited. */
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
}

/**
 * Start a server: `bin` is the absolute executable path, `argv` its arguments (without argv[0]),
 * `env` its complete environment, `cwd` its working directory (undefined: the spawner's choice).
 * Rejects (or throws) when the process cannot be started.
 */
export type McpSpawn = (bin: string, argv: string[], env: Record<string, string>, cwd: string | undefined) => McpProcess | Promise<McpProcess>;

export interface McpClientOptions {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  spawn: McpSpawn;
  /** Our version for clientInfo {name: 'claw-edge', version}. */
  clientVersion: string;
  logger?: Logger;
  /** How the server is named in messages and logs (default: the command). */
  label?: string;
  /** Largest accepted message from the server, in bytes (default 8 MiB). */
  maxFrameBytes?: number;
  /** Characters of server stderr kept for error messages (default 4096). */
  stderrTailBytes?: number;
  /** Spawn + initialize must finish within this (default 30 s). */
  startTimeoutMs?: number;
  /** Default timeout of tools/list (default 30 s). tools/call has none by default: use timeoutMs/signal. */
  requestTimeoutMs?: number;
  /** close(): how long to wait for the server to exit after stdin is closed (default 2 s). */
  closeGraceMs?: number;
}

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
const MAX_GARBAGE_LOGS = 5;
const MAX_PAGES = 1000;

function abortReason(signal: AbortSignal): { code: 'timeout' | 'aborted'; text: string } {
  const r: unknown = signal.reason;
  const isTimeout = isObj(r) && (r as { name?: unknown }).name === 'TimeoutError';
  const text = r instanceof Error || (isObj(r) && typeof r.message === 'string') ? String((r as { message: string }).message) : typeof r === 'string' ? r : 'aborted';
  return { code: isTimeout ? 'timeout' : 'aborted', text };
}

function fmtExit(st: { code: number | null; signal: string | null } | undefined): string {
  if (!st) return 'it is gone';
  if (st.signal) return `killed by signal ${st.signal}`;
  return `exit code ${st.code}`;
}

interface Pending {
  what: string;
  resolve(v: unknown): void;
  reject(e: McpError): void;
}

/** One server process and its JSON-RPC session. Dead for good once stopped or exited. */
class Connection {
  readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private readonly decoder: NdjsonDecoder;
  private stderrTail = '';
  private garbage = 0;
  dead: McpError | undefined;
  private stopPromise: Promise<void> | undefined;
  info: McpServerInfo | undefined;
  private stdoutEnded!: Promise<void>;
  private exitStatus: { code: number | null; signal: string | null } | undefined;
  /** Bumped by notifications/tools/list_changed. */
  toolsEpoch = 0;
  toolsCache: { epoch: number; tools: McpTool[] } | undefined;

  constructor(
    readonly proc: McpProcess,
    private readonly o: { label: string; logger: Logger; maxFrameBytes: number; stderrTailBytes: number; onDead: (c: Connection) => void },
  ) {
    this.decoder = new NdjsonDecoder(o.maxFrameBytes);
    this.wire();
  }

  private wire(): void {
    const { proc, o } = this;
    const enc = new TextEncoder();
    this.stdoutEnded = new Promise<void>((resolve) => {
      proc.stdout.on('end', resolve);
      proc.stdout.on('close', resolve);
      proc.stdout.on('error', resolve);
    });
    proc.stdout.on('data', (chunk: Uint8Array | string) => {
      if (this.dead) return;
      for (const ev of this.decoder.push(typeof chunk === 'string' ? enc.encode(chunk) : chunk)) this.onFrameEvent(ev);
    });
    proc.stdout.on('end', () => {
      if (!this.dead) for (const ev of this.decoder.end()) this.onFrameEvent(ev);
    });
    const errDec = new TextDecoder();
    let partial = '';
    proc.stderr.on('data', (chunk: Uint8Array | string) => {
      const s = typeof chunk === 'string' ? chunk : errDec.decode(chunk, { stream: true });
      this.stderrTail = (this.stderrTail + s).slice(-o.stderrTailBytes);
      const lines = (partial + s).split('\n');
      partial = clip(lines.pop() ?? '', 4096);
      for (const line of lines) if (line.trim()) o.logger.debug('mcp server stderr', { server: o.label, line: clip(line, 1000) });
    });
    proc.stderr.on('error', () => {});
    // A server that exits before reading everything makes our writes fail with EPIPE: the exit
    // is what we report, not the write error.
    proc.stdin.on('error', (err: Error) => o.logger.debug('mcp server stdin error', { server: o.label, error: err.message }));
    proc.exited.then(
      (st) => this.onExit(st),
      () => this.onExit(undefined),
    );
  }

  /** "; server stderr: ..." for error messages, or ''. */
  stderrNote(): string {
    const t = this.stderrTail.trim();
    return t ? `; server stderr: ${t}` : '';
  }

  private async onExit(st: { code: number | null; signal: string | null } | undefined): Promise<void> {
    this.exitStatus = st;
    if (this.dead) return;
    // Let responses still in the pipe arrive before we fail what is pending ('exit' can come
    // before the last stdout data).
    await Promise.race([this.stdoutEnded, new Promise((r) => setTimeout(r, 200))]);
    if (this.dead) return;
    const how = fmtExit(st);
    this.o.logger.warn('mcp server exited', { server: this.o.label, exit: how });
    const gone = new McpError('crashed', `MCP server ${this.o.label} exited unexpectedly (${how}); it will be restarted on next use${this.stderrNote()}`);
    // The leader is gone but what it started may not be: stop() kills the group too.
    void this.stop(
      (p) => new McpError('crashed', `MCP server ${this.o.label} exited unexpectedly (${how}) while ${p.what} was pending; it will be restarted on next use${this.stderrNote()}`),
      gone,
    );
  }

  /** Resolves once the server is gone (immediately when it was never stopped). */
  get stopped(): Promise<void> {
    return this.stopPromise ?? Promise.resolve();
  }

  /**
   * Kill the server (its process group), then fail all pending requests with errFor(pending).
   * Idempotent. Resolves once the process is gone.
   */
  stop(errFor: (p: Pending) => McpError, reason: McpError): Promise<void> {
    return this.finish(reason, errFor, async () => {
      try {
        await this.proc.kill();
      } catch (err) {
        this.o.logger.warn('mcp server kill failed', { server: this.o.label, error: String((err as Error)?.message ?? err) });
      }
    });
  }

  /** Graceful shutdown (MCP stdio): close stdin, wait for exit, then kill the group anyway. */
  close(graceMs: number, err: McpError): Promise<void> {
    return this.finish(err, () => err, async () => {
      try {
        this.proc.stdin.end();
      } catch {
        /* already closed */
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.proc.exited.catch(() => undefined), new Promise((r) => (timer = setTimeout(r, timerDelay(graceMs))))]);
      clearTimeout(timer);
      try {
        await this.proc.kill();
      } catch {
        /* nothing left to kill */
      }
    });
  }

  private finish(reason: McpError, errFor: (p: Pending) => McpError, end: () => Promise<void>): Promise<void> {
    if (this.stopPromise) return this.stopPromise;
    if (!this.dead) this.dead = reason;
    this.stopPromise = (async () => {
      await end();
      this.destroyStreams();
      const all = [...this.pending.values()];
      this.pending.clear();
      for (const p of all) p.reject(errFor(p));
    })();
    this.o.onDead(this);
    return this.stopPromise;
  }

  private destroyStreams(): void {
    for (const s of [this.proc.stdin, this.proc.stdout, this.proc.stderr] as { destroy?: () => void }[]) {
      try {
        s.destroy?.();
      } catch {
        /* ignore */
      }
    }
  }

  private write(msg: unknown): void {
    if (this.dead) return;
    try {
      this.proc.stdin.write(encodeFrame(msg));
    } catch (err) {
      this.o.logger.debug('mcp server write failed', { server: this.o.label, error: String((err as Error)?.message ?? err) });
    }
  }

  notify(method: string, params?: unknown): void {
    this.write(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  /**
   * Send a request. On timeout/abort while in flight: notifications/cancelled (when cancellable),
   * stop the server, then reject with McpError 'timeout'/'aborted'.
   */
  request(method: string, params: unknown, what: string, opts: RequestOptions & { cancellable: boolean }): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const { signal, timeoutMs } = opts;
    if (signal?.aborted) {
      const r = abortReason(signal);
      return Promise.reject(new McpError(r.code, `MCP ${what} on ${this.o.label} was aborted before it was sent: ${r.text}`));
    }
    const id = this.nextId++;
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
        const why = new McpError('stopped', `MCP server ${this.o.label} was stopped because ${what} (request ${id}) ${err.code === 'timeout' ? 'timed out' : 'was aborted'}; it will be restarted on next use`);
        void this.stop(() => why, why).then(() => reject(err));
      };
      const onAbort = () => {
        const r = abortReason(signal!);
        giveUp(new McpError(r.code, `MCP ${what} on ${this.o.label} ${r.code === 'timeout' ? 'timed out' : 'was aborted'} (${r.text}); the server was stopped and will be restarted on next use`), r.text);
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
        timer = setTimeout(
          () => giveUp(new McpError('timeout', `MCP ${what} on ${this.o.label} timed out after ${timeoutMs} ms; the server was stopped and will be restarted on next use`), `timed out after ${timeoutMs} ms`),
          timerDelay(timeoutMs),
        );
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.write(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    });
  }

  // ---- inbound ----

  private onFrameEvent(ev: ReturnType<NdjsonDecoder['push']>[number]): void {
    if (ev.type === 'oversize') {
      const err = new McpError('protocol', `MCP server ${this.o.label} sent a message of ${ev.bytes} bytes, over the ${ev.limit}-byte frame limit; the server was stopped and will be restarted on next use`);
      this.o.logger.warn('mcp server frame over limit', { server: this.o.label, bytes: ev.bytes, limit: ev.limit });
      void this.stop(() => err, err);
      return;
    }
    if (ev.type === 'encoding') {
      this.noteGarbage('a line that is not valid UTF-8');
      return;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(ev.text);
    } catch {
      this.noteGarbage(clip(ev.text));
      return;
    }
    if (Array.isArray(msg)) {
      // JSON-RPC batches (MCP 2025-03-26 allowed them): handle each, answer requests in one batch.
      const replies: unknown[] = [];
      for (const m of msg) this.onMessage(m, replies);
      if (replies.length > 0) this.write(replies);
      return;
    }
    this.onMessage(msg, undefined);
  }

  private noteGarbage(what: string): void {
    this.garbage++;
    if (this.garbage <= MAX_GARBAGE_LOGS) {
      this.o.logger.warn('mcp server wrote a non-JSON-RPC line on stdout (ignored)', { server: this.o.label, line: what });
    } else if (this.garbage === MAX_GARBAGE_LOGS + 1) {
      this.o.logger.warn('mcp server keeps writing non-JSON-RPC lines on stdout; no longer logging them', { server: this.o.label });
    }
  }

  private onMessage(x: unknown, batch: unknown[] | undefined): void {
    const reply = (m: unknown) => (batch ? batch.push(m) : this.write(m));
    const c = classify(x);
    switch (c.type) {
      case 'response': {
        const { id } = c.msg;
        const p = typeof id === 'number' ? this.pending.get(id) : undefined;
        if (!p) {
          this.o.logger.warn('mcp server sent a response with an id we are not waiting for (ignored)', { server: this.o.label, id: clip(JSON.stringify(id)) });
          return;
        }
        this.pending.delete(id as number);
        if ('error' in c.msg) {
          const e = c.msg.error;
          p.reject(new McpError('rpc', `MCP server ${this.o.label} answered ${p.what} with error ${e.code}: ${e.message}`, { rpcCode: e.code, data: e.data }));
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
        this.o.logger.debug('mcp server request not supported', { server: this.o.label, method });
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
        this.o.logger.warn('mcp server sent an invalid JSON-RPC message (ignored)', { server: this.o.label, reason: c.reason });
        if (isObj(x) && typeof x.method === 'string' && 'id' in x) {
          reply({ jsonrpc: '2.0', id: c.id, error: { code: -32600, message: `Invalid request: ${c.reason}` } });
        }
        return;
      }
    }
  }

  private onNotification(method: string, params: unknown): void {
    const { logger, label } = this.o;
    if (method === 'notifications/tools/list_changed') {
      this.toolsEpoch++;
      this.toolsCache = undefined;
      logger.debug('mcp server tool list changed', { server: label });
      return;
    }
    if (method === 'notifications/message' && isObj(params)) {
      // MCP log levels (RFC 5424 names) → ours.
      const lvl = String(params.level);
      const fields = { server: label, logger: params.logger, data: params.data };
      if (lvl === 'debug') logger.debug('mcp server log', fields);
      else if (lvl === 'info' || lvl === 'notice') logger.info('mcp server log', fields);
      else if (lvl === 'warning') logger.warn('mcp server log', fields);
      else logger.error('mcp server log', fields);
      return;
    }
    logger.debug('mcp server notification', { server: label, method });
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

  constructor(private readonly o: McpClientOptions) {
    this.label = o.label ?? o.command;
    this.logger = o.logger ?? noopLogger;
  }

  /** How many times a server process was started (1 after the first use; +1 per restart). */
  get generation(): number {
    return this.starts;
  }
  /** pid of the running server, if any. */
  get pid(): number | undefined {
    return this.conn?.dead ? undefined : this.conn?.proc.pid;
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
    const conn = await this.connection(opts.signal);
    const epoch = conn.toolsEpoch;
    const tools: McpTool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      if (page >= MAX_PAGES) throw new McpError('protocol', `MCP server ${this.label} returned more than ${MAX_PAGES} pages from tools/list`);
      const res = await conn.request('tools/list', cursor === undefined ? {} : { cursor }, 'tools/list', {
        signal: opts.signal,
        timeoutMs: opts.timeoutMs ?? this.o.requestTimeoutMs ?? 30_000,
        cancellable: true,
      });
      if (!isObj(res) || !Array.isArray(res.tools)) throw new McpError('protocol', `MCP server ${this.label} answered tools/list without a tools array`);
      for (const t of res.tools) {
        const tool = toTool(t);
        if (!tool) {
          this.logger.warn('mcp server listed a malformed tool (skipped)', { server: this.label, tool: clip(JSON.stringify(t)) });
          continue;
        }
        tools.push(tool);
      }
      if (res.nextCursor === undefined || res.nextCursor === null) break;
      if (typeof res.nextCursor !== 'string') throw new McpError('protocol', `MCP server ${this.label} answered tools/list with a non-string nextCursor`);
      if (seen.has(res.nextCursor)) throw new McpError('protocol', `MCP server ${this.label} repeated tools/list cursor ${JSON.stringify(res.nextCursor)}`);
      seen.add(res.nextCursor);
      cursor = res.nextCursor;
    }
    if (conn.toolsEpoch === epoch) conn.toolsCache = { epoch, tools };
    return tools;
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
    const conn = await this.connection(opts.signal);
    const what = `tools/call "${name}"`;
    const res = await conn.request('tools/call', { name, arguments: args }, what, { signal: opts.signal, timeoutMs: opts.timeoutMs, cancellable: true });
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
    let proc: McpProcess;
    try {
      proc = await this.o.spawn(this.o.command, this.o.args ?? [], this.o.env ?? {}, this.o.cwd);
    } catch (err) {
      throw new McpError('spawn', `could not start MCP server ${this.label}: ${String((err as Error)?.message ?? err)}`);
    }
    const conn = new Connection(proc, {
      label: this.label,
      logger: this.logger,
      maxFrameBytes: this.o.maxFrameBytes ?? 8 * 1024 * 1024,
      stderrTailBytes: this.o.stderrTailBytes ?? 4096,
      onDead: (c) => {
        if (this.conn === c) this.conn = undefined;
        this.lastStop = c.stopped;
      },
    });
    this.logger.debug('mcp server started', { server: this.label, pid: proc.pid });
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
      conn.notify('notifications/initialized');
      if (this.closed) throw new McpError('closed', `MCP client for ${this.label} was closed during start`);
      this.conn = conn;
      this.logger.info('mcp server ready', { server: this.label, protocolVersion: res.protocolVersion, serverInfo: conn.info.serverInfo });
      return conn;
    } catch (err) {
      const e = err instanceof McpError ? err : new McpError('protocol', String((err as Error)?.message ?? err));
      await conn.stop(() => e, e);
      throw e;
    }
  }
}

function toTool(t: unknown): McpTool | undefined {
  if (!isObj(t) || typeof t.name !== 'string' || t.name === '') return undefined;
  const tool: McpTool = { name: t.name, inputSchema: isObj(t.inputSchema) ? t.inputSchema : { type: 'object' } };
  if (typeof t.title === 'string') tool.title = t.title;
  if (typeof t.description === 'string') tool.description = t.description;
  if (isObj(t.outputSchema)) tool.outputSchema = t.outputSchema;
  if (isObj(t.annotations)) tool.annotations = t.annotations;
  return tool;
}
