// MCP stdio transport: newline-delimited JSON-RPC on a child's stdin/stdout, diagnostics on stderr.
// The process is started through an INJECTED spawn function so the runtime can run the server
// inside its sandbox (node-spawn.ts has the plain node:child_process adapter).
// - Lines on stdout that are not JSON (a chatty server printing banners) or not UTF-8 are logged
//   (the first few per server) and ignored. A frame over maxFrameBytes, or nested deeper than
//   inbound.ts allows, is a protocol violation: we cannot tell which request it answered, so the
//   session ends (the core stops the server).
// - Back-pressure: while the server does not read its stdin, we do not read its stdout (what it sends
//   makes us write: answers to its requests), so neither side buffers without bound.
// - Server stderr: the last stderrTailBytes characters are kept and appended to error messages
//   about that server; its lines are also logged at debug, at most STDERR_LINES_PER_SECOND a second
//   (1,000 characters each), the rest counted and said in one line. MCP lets a server write anything
//   to stderr (spec "Transports / stdio"), so what it writes must not decide the size of our log.
// - An unexpected exit ends the session; the core then kills the process group too (children the
//   server left behind).
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../../kernel/ports.ts';
import { NdjsonDecoder, encodeFrame } from '../../protocol/framing.ts';
import type { McpChannel, McpChannelHooks, McpTransport } from './channel.ts';
import { McpError } from './errors.ts';
import { MAX_MESSAGE_DEPTH, parseInbound } from './inbound.ts';
import { timerDelay } from '../../protocol/delay.ts';
import { LineWindow } from '../../log/line-window.ts';

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

export interface StdioTransportOptions {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  spawn: McpSpawn;
  label: string;
  logger: Logger;
  maxFrameBytes: number;
  stderrTailBytes: number;
}

const clip = (s: string, n = 200) => (s.length > n ? `${s.slice(0, n)}…` : s);
const MAX_GARBAGE_LOGS = 5;
/** Lines of one server's stderr logged per second; the others are counted (StderrLog). */
export const STDERR_LINES_PER_SECOND = 20;

/** Logs a server's stderr lines within STDERR_LINES_PER_SECOND; one line per second says how many were left out. */
class StderrLog {
  private readonly window = new LineWindow(STDERR_LINES_PER_SECOND, 1000);

  constructor(
    private readonly logger: Logger,
    private readonly label: string,
  ) {}

  line(text: string): void {
    if (this.window.admit(() => this.flush())) this.logger.debug('mcp server stderr', { server: this.label, line: clip(text, 1000) });
  }

  /** Say how many lines were left out since the last time (at a new window, and when stderr ends). */
  flush(): void {
    const suppressed = this.window.takeRefused();
    if (suppressed === 0) return;
    this.logger.debug('mcp server stderr: lines suppressed', { server: this.label, suppressed, per_second: STDERR_LINES_PER_SECOND });
  }
}

function fmtExit(st: { code: number | null; signal: string | null } | undefined): string {
  if (!st) return 'it is gone';
  if (st.signal) return `killed by signal ${st.signal}`;
  return `exit code ${st.code}`;
}

export function stdioTransport(o: StdioTransportOptions): McpTransport {
  return {
    async open(hooks) {
      let proc: McpProcess;
      try {
        proc = await o.spawn(o.command, o.args ?? [], o.env ?? {}, o.cwd);
      } catch (err) {
        throw new McpError('spawn', `could not start MCP server ${o.label}: ${String((err as Error)?.message ?? err)}`);
      }
      o.logger.debug('mcp server started', { server: o.label, pid: proc.pid });
      return new StdioChannel(proc, o, hooks);
    },
  };
}

class StdioChannel implements McpChannel {
  readonly stopOnCancel = true;
  private readonly decoder: NdjsonDecoder;
  private stderrTail = '';
  private garbage = 0;
  private ended = false;
  private held = false;
  private stdoutEnded!: Promise<void>;

  constructor(
    private readonly proc: McpProcess,
    private readonly o: StdioTransportOptions,
    private readonly hooks: McpChannelHooks,
  ) {
    this.decoder = new NdjsonDecoder(o.maxFrameBytes);
    this.wire();
  }

  get pid(): number | undefined {
    return this.proc.pid;
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
      if (this.ended) return;
      for (const ev of this.decoder.push(typeof chunk === 'string' ? enc.encode(chunk) : chunk)) this.onFrameEvent(ev);
    });
    proc.stdout.on('end', () => {
      if (!this.ended) for (const ev of this.decoder.end()) this.onFrameEvent(ev);
    });
    const errDec = new TextDecoder();
    const errLog = new StderrLog(o.logger, o.label);
    let partial = '';
    proc.stderr.on('data', (chunk: Uint8Array | string) => {
      const s = typeof chunk === 'string' ? chunk : errDec.decode(chunk, { stream: true });
      this.stderrTail = (this.stderrTail + s).slice(-o.stderrTailBytes);
      const lines = (partial + s).split('\n');
      partial = clip(lines.pop() ?? '', 4096);
      for (const line of lines) if (line.trim()) errLog.line(line);
    });
    proc.stderr.on('end', () => errLog.flush());
    proc.stderr.on('close', () => errLog.flush());
    proc.stderr.on('error', () => {});
    // A server that exits before reading everything makes our writes fail with EPIPE: the exit
    // is what we report, not the write error.
    proc.stdin.on('error', (err: Error) => o.logger.debug('mcp server stdin error', { server: o.label, error: err.message }));
    proc.exited.then(
      (st) => this.onExit(st),
      () => this.onExit(undefined),
    );
  }

  note(): string {
    const t = this.stderrTail.trim();
    return t ? `; server stderr: ${t}` : '';
  }

  private async onExit(st: { code: number | null; signal: string | null } | undefined): Promise<void> {
    if (this.ended) return;
    // Let responses still in the pipe arrive before we fail what is pending ('exit' can come
    // before the last stdout data).
    await Promise.race([this.stdoutEnded, new Promise((r) => setTimeout(r, 200))]);
    if (this.ended) return;
    const how = fmtExit(st);
    this.o.logger.warn('mcp server exited', { server: this.o.label, exit: how });
    this.hooks.onClosed((what) =>
      what === undefined
        ? new McpError('crashed', `MCP server ${this.o.label} exited unexpectedly (${how}); it will be restarted on next use${this.note()}`)
        : new McpError('crashed', `MCP server ${this.o.label} exited unexpectedly (${how}) while ${what} was pending; it will be restarted on next use${this.note()}`),
    );
  }

  send(msg: unknown): void {
    if (this.ended) return;
    try {
      if (!this.proc.stdin.write(encodeFrame(msg))) this.hold();
    } catch (err) {
      this.o.logger.debug('mcp server write failed', { server: this.o.label, error: String((err as Error)?.message ?? err) });
    }
  }

  /**
   * The server does not read what we write (its stdin pipe is full): stop reading its stdout until it does. Each
   * request it sends makes us write an answer, so a server that floods requests without reading grew our stdin
   * buffer without bound (35 MB after 200,000 requests); paused, it blocks on its own full stdout pipe instead.
   */
  private hold(): void {
    if (this.held) return;
    this.held = true;
    this.proc.stdout.pause();
    this.proc.stdin.once('drain', () => {
      this.held = false;
      if (!this.ended) this.proc.stdout.resume();
    });
  }

  abandon(): void {
    // One process serves every request: the core stops the whole server (stopOnCancel).
  }

  negotiated(): void {}

  async kill(): Promise<void> {
    this.ended = true;
    try {
      await this.proc.kill();
    } catch (err) {
      this.o.logger.warn('mcp server kill failed', { server: this.o.label, error: String((err as Error)?.message ?? err) });
    }
    this.destroyStreams();
  }

  /** MCP stdio shutdown: close stdin, wait for the exit, then kill the group anyway. */
  async close(graceMs: number): Promise<void> {
    this.ended = true;
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
    this.destroyStreams();
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

  private onFrameEvent(ev: ReturnType<NdjsonDecoder['push']>[number]): void {
    if (ev.type === 'oversize') {
      this.o.logger.warn('mcp server frame over limit', { server: this.o.label, bytes: ev.bytes, limit: ev.limit });
      this.breakSession(`a message of ${ev.bytes} bytes, over the ${ev.limit}-byte frame limit`);
      return;
    }
    if (ev.type === 'encoding') {
      this.noteGarbage('a line that is not valid UTF-8');
      return;
    }
    const r = parseInbound(ev.text);
    if (r.ok) this.hooks.onMessage(r.value);
    else if (r.why === 'not-json') this.noteGarbage(clip(ev.text));
    else this.breakSession(`a message nested deeper than ${MAX_MESSAGE_DEPTH} levels`);
  }

  /** A message we will not read: we cannot tell which request it answered, so the session ends. */
  private breakSession(what: string): void {
    const err = new McpError('protocol', `MCP server ${this.o.label} sent ${what}; the server was stopped and will be restarted on next use`);
    this.ended = true;
    this.hooks.onClosed(() => err);
  }

  private noteGarbage(what: string): void {
    this.garbage++;
    if (this.garbage <= MAX_GARBAGE_LOGS) {
      this.o.logger.warn('mcp server wrote a non-JSON-RPC line on stdout (ignored)', { server: this.o.label, line: what });
    } else if (this.garbage === MAX_GARBAGE_LOGS + 1) {
      this.o.logger.warn('mcp server keeps writing non-JSON-RPC lines on stdout; no longer logging them', { server: this.o.label });
    }
  }
}
