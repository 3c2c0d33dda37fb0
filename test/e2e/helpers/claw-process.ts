// Spawns the built dist/claw.mjs the way an operator would and speaks NDJSON to it.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join, resolve } from 'node:path';

export const ROOT = process.cwd();
// CLAW_BUNDLE: another build of the same runtime to test (e.g. .build/cold/claw.mjs), without replacing dist/.
export const CLAW = process.env.CLAW_BUNDLE ? resolve(ROOT, process.env.CLAW_BUNDLE) : join(ROOT, 'dist', 'claw.mjs');

export interface ClawRun {
  child: ChildProcessWithoutNullStreams;
  /** Every parsed stdout line, in order. */
  messages: any[];
  /** Raw stdout lines that were not JSON (must stay empty: stdout is protocol only). */
  garbage: string[];
  stderr: () => string;
  send(msg: unknown): void;
  sendRaw(text: string): void;
  /** Send a request and wait for the reply with the same id. */
  request(method: string, params?: unknown, id?: string | number): Promise<any>;
  /** Wait until a message matching `pred` arrives (checks already received ones first). */
  waitFor(pred: (m: any) => boolean, timeoutMs?: number): Promise<any>;
  /** Close stdin and wait for exit; resolves with the exit code. */
  end(): Promise<number | null>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

let nextId = 1000;

export function startClaw(args: string[], opts: { cwd?: string; env?: Record<string, string>; wrap?: string[]; bundle?: string } = {}): ClawRun {
  // `wrap`: a command prefix, e.g. ['unshare', '-m', 'sh', '-c', '... exec "$0" "$@"'] for namespaced runs.
  // `bundle`: a copy of dist/claw.mjs elsewhere (e.g. where a service user can read it).
  const cmd = [...(opts.wrap ?? []), process.execPath, opts.bundle ?? CLAW, ...args];
  const child = spawn(cmd[0], cmd.slice(1), {
    cwd: opts.cwd ?? ROOT,
    env: { PATH: process.env.PATH ?? '', ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages: any[] = [];
  const garbage: string[] = [];
  let err = '';
  let buf = '';
  const waiters: { pred: (m: any) => boolean; resolve: (m: any) => void }[] = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let m: any;
      try {
        m = JSON.parse(line);
      } catch {
        garbage.push(line);
        continue;
      }
      messages.push(m);
      for (const w of [...waiters]) {
        if (w.pred(m)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c: string) => (err += c));
  // A write to a runtime that has just died (the crash tests SIGKILL it mid-traffic) fails with EPIPE on the
  // pipe. Unheard, that error ends the whole test process; the request is settled by its timeout or by `exited`.
  child.stdin.on('error', () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitFor = (pred: (m: any) => boolean, timeoutMs = 5000) =>
    new Promise<any>((resolve, reject) => {
      const found = messages.find(pred);
      if (found) return resolve(found);
      const t = setTimeout(() => reject(new Error(`timed out waiting for a message; got ${JSON.stringify(messages).slice(0, 500)}; stderr ${err.slice(-500)}`)), timeoutMs);
      waiters.push({
        pred,
        resolve: (m) => {
          clearTimeout(t);
          resolve(m);
        },
      });
    });
  const send = (msg: unknown) => child.stdin.write(`${JSON.stringify(msg)}\n`);
  return {
    child,
    messages,
    garbage,
    stderr: () => err,
    send,
    sendRaw: (text) => child.stdin.write(text),
    request(method, params, id = nextId++) {
      const msg: Record<string, unknown> = { jsonrpc: '2.0', id, method };
      if (params !== undefined) msg.params = params;
      send(msg);
      return waitFor((m) => m.id === id && ('result' in m || 'error' in m));
    },
    waitFor,
    async end() {
      child.stdin.end();
      return (await exited).code;
    },
    exited,
    kill: () => child.kill('SIGKILL'),
  };
}

/**
 * Run a CLI command to completion; returns exit code, output and how long it took. `killAfterMs`: a command still
 * running then is SIGKILLed and the promise rejects, naming the command and the end of its output.
 */
export function runClaw(args: string[], opts: { cwd?: string; input?: string; env?: Record<string, string>; killAfterMs?: number } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; took: number }>((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, [CLAW, ...args], { cwd: opts.cwd ?? ROOT, env: { PATH: process.env.PATH ?? '', ...opts.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer =
      opts.killAfterMs === undefined
        ? undefined
        : setTimeout(() => {
            child.kill('SIGKILL');
            reject(new Error(`claw ${args[0]} did not exit within ${opts.killAfterMs} ms; stdout ${stdout.slice(-500)}; stderr ${stderr.slice(-1000)}`));
          }, opts.killAfterMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, took: Date.now() - t0 });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** The TV-L1-04 initialize params, with overrides. */
export function initParams(over: Record<string, unknown> = {}) {
  return {
    protocolVersion: '0.3.0',
    clientInfo: { name: 'test-operator', version: '1.0.0' },
    manifest: {
      kind: 'Claw',
      metadata: { name: 'test-bot' },
      spec: {
        identity: { inline: { personality: 'Test agent.' } },
        providers: [{ inline: { protocol: 'openai-compatible', endpoint: 'http://localhost:11434/v1', model: 'llama3', auth: { type: 'none' } } }],
      },
    },
    capabilities: {},
    ...over,
  };
}
