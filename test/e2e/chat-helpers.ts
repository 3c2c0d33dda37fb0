// Helpers for the `claw chat` end-to-end tests (test/e2e/chat*.test.ts): an agent written to a temp
// directory (manifest + claw.runtime.yaml, JSON being YAML), `claw chat` spawned on dist/claw.mjs
// with piped input, and readers for what it left behind: the audit log, the telemetry file, files
// its tools wrote. The model is test/helpers/fake-llm-server.ts, a real HTTP server in this process,
// so the child is spawned asynchronously (a sync spawn would block the server it talks to).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAW } from './helpers/claw-process.ts';
import type { Test } from 'uvu';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm-server.ts';

export const ECHO_SCHEMA = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false };
export const WRITE_SCHEMA = {
  type: 'object',
  properties: { path: { type: 'string' }, content: { type: 'string' } },
  required: ['path', 'content'],
  additionalProperties: false,
};

export interface AgentOptions {
  /** Provider primitives' `inline` specs, in manifest order (the first is primary). */
  providers: Record<string, unknown>[];
  /** Extra manifest tools (inline specs). */
  tools?: Record<string, unknown>[];
  skills?: Record<string, unknown>[];
  /** Policy rules; the default set: forbidden-write denied, careful-write needs approval, the rest allowed. */
  rules?: Record<string, unknown>[];
  autonomy?: string;
  memory?: boolean;
  /** The conversation store's `scope` (spec §5.6), with `memory`. */
  memoryScope?: string;
  /** Extra claw.runtime.yaml entries. */
  runtime?: Record<string, unknown>;
  /** Leave out the cli Channel: the manifest is then Level 1 (spec §11) and the agent has no tools. */
  noChannel?: boolean;
  /** Files beside the manifest (name → text), e.g. an offline rules file. */
  files?: Record<string, string>;
}

export interface Agent {
  dir: string;
  /** The sandbox's writable directory, where file-write tools write. */
  ws: string;
  dataDir: string;
  auditFile: string;
  telemetryFile: string;
}

export const DEFAULT_RULES = [
  { id: 'no-forbidden', action: 'deny', scope: 'all', conditions: { tool: 'forbidden-write' }, reason: 'never' },
  { id: 'careful', action: 'require-approval', scope: 'all', conditions: { tool: 'careful-write' }, reason: 'writes carefully' },
  { id: 'rest', action: 'allow', scope: 'all' },
];

const made: string[] = [];

/** Removes every agent directory made so far (call once, after the suite). */
export function removeAgents(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** One agent in a fresh temp directory: tools echo, file-write, careful-write and forbidden-write. */
export function makeAgent(o: AgentOptions): Agent {
  const dir = mkdtempSync(join(tmpdir(), 'claw-chat-e2e-'));
  made.push(dir);
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  const dataDir = join(dir, 'data');
  const telemetryFile = join(dir, 'telemetry.jsonl');
  const tools = [
    { name: 'echo', description: 'Repeats a text back', annotations: { readOnlyHint: true }, input_schema: ECHO_SCHEMA },
    { name: 'file-write', description: 'Writes a file', input_schema: WRITE_SCHEMA },
    { name: 'careful-write', description: 'Writes a file after a person agrees', input_schema: WRITE_SCHEMA },
    { name: 'forbidden-write', description: 'Writes a file (never allowed)', input_schema: WRITE_SCHEMA },
    ...(o.tools ?? []),
  ];
  const spec: Record<string, unknown> = {
    identity: { inline: { name: 'e2e-agent', personality: 'You are a test agent.', autonomy: o.autonomy ?? 'autonomous' } },
    providers: o.providers.map((p) => ({ inline: p })),
    // Level 2 needs a declared Channel (spec §11; the implicit CLI channel does not count), else no tools.
    channels: [{ inline: { name: 'terminal', type: 'cli', transport: 'stdio', auth: { secret_ref: 'CLI_TOKEN' }, access_control: { mode: 'open' } } }],
    tools: tools.map((t) => ({ inline: t })),
    sandbox: {
      inline: {
        level: 'none',
        capabilities: { network: { mode: 'deny' }, filesystem: { mode: 'scoped', mount_paths: [{ path: ws, permissions: 'rw' }] } },
      },
    },
    policies: [{ inline: { name: 'e2e-policy', rules: o.rules ?? DEFAULT_RULES } }],
    telemetry: {
      inline: {
        name: 'e2e-telemetry',
        exporters: [{ type: 'file', path: telemetryFile, batch: { max_size: 1, flush_interval_ms: 100 } }],
        events: { tool_calls: true, errors: true, lifecycle: true },
        metrics: { token_usage: true, latency_histogram: true },
      },
    },
  };
  if (o.noChannel) delete spec.channels;
  if (o.skills) spec.skills = o.skills.map((s) => ({ inline: s }));
  if (o.memory) {
    spec.memory = { inline: { name: 'chat-memory', stores: [{ name: 'conversation', type: 'conversation', backend: 'sqlite', retention: { max_entries: 500 }, ...(o.memoryScope ? { scope: o.memoryScope } : {}) }] } };
  }
  const manifest = { claw: '0.3.0', kind: 'Claw', metadata: { name: 'e2e-agent', version: '1.0.0' }, spec };
  writeFileSync(join(dir, 'claw.yaml'), JSON.stringify(manifest, null, 2));
  const runtime = {
    data_dir: dataDir,
    tools: { 'careful-write': { builtin: 'file-write' }, 'forbidden-write': { builtin: 'file-write' } },
    ...o.runtime,
  };
  writeFileSync(join(dir, 'claw.runtime.yaml'), JSON.stringify(runtime, null, 2));
  for (const [name, text] of Object.entries(o.files ?? {})) writeFileSync(join(dir, name), text);
  return { dir, ws, dataDir, auditFile: join(dataDir, 'audit', 'audit.jsonl'), telemetryFile };
}

export interface ChatRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout split into reply lines (the trailing newline removed). */
  replies: string[];
}

/** `claw chat claw.yaml` with `lines` piped in; resolves when it exits (killed after `timeoutMs`). */
export function chat(
  a: Agent,
  lines: string[],
  o: { timeoutMs?: number; args?: string[]; keepOpen?: boolean; whileRunning?: (child: ReturnType<typeof spawn>) => void } = {},
): Promise<ChatRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLAW, 'chat', 'claw.yaml', ...(o.args ?? [])], {
      cwd: a.dir,
      env: { PATH: process.env.PATH ?? '', HOME: a.dir, USER: 'tester' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`claw chat did not exit within ${o.timeoutMs ?? 20000} ms; stdout ${stdout.slice(-500)}; stderr ${stderr.slice(-1500)}`));
    }, o.timeoutMs ?? 20000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, replies: stdout === '' ? [] : stdout.replace(/\n$/, '').split('\n') });
    });
    const text = lines.map((l) => `${l}\n`).join('');
    // keepOpen: input stays open (a person at a terminal who has not typed the next line yet).
    if (o.keepOpen) child.stdin.write(text);
    else child.stdin.end(text);
    o.whileRunning?.(child);
  });
}

/**
 * `claw chat` on a terminal: run under util-linux `script`, which gives it a pseudo-terminal for stdin
 * and stdout. The output is the terminal's: the echoed input lines first (all input is written at
 * once), CRLF line ends. Undefined when `script` is not installed.
 */
export function chatTty(a: Agent, lines: string[], timeoutMs = 20000): Promise<{ code: number | null; out: string }> | undefined {
  if (spawnSync('script', ['--version']).status !== 0) return undefined;
  return new Promise((resolve, reject) => {
    const cmd = [process.execPath, CLAW, 'chat', 'claw.yaml'].map((x) => `'${x}'`).join(' ');
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: a.dir, env: { PATH: process.env.PATH ?? '', HOME: a.dir, USER: 'tester', TERM: 'dumb' } });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`claw chat on a terminal did not exit; output ${JSON.stringify(out.slice(-800))}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
    child.stdin.end(lines.map((l) => `${l}\n`).join(''));
  });
}

/** The audit log's records, after `claw audit verify` said the chain is intact. */
export function auditRecords(a: Agent): any[] {
  const v = spawnSync(process.execPath, [CLAW, 'audit', 'verify', a.auditFile, '--json'], { encoding: 'utf8' });
  if (v.status !== 0) throw new Error(`claw audit verify failed (${v.status}): ${v.stdout} ${v.stderr}`);
  const records = readFileSync(a.auditFile, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  const verdict = JSON.parse(v.stdout);
  if (verdict.ok !== true || verdict.verified !== records.length) throw new Error(`audit verify: ${v.stdout}`);
  return records;
}

/** Audit record kinds without the per-open marker, in order. */
export function auditKinds(records: any[]): string[] {
  return records.map((r) => r.kind).filter((k) => k !== 'audit.opened');
}

export function telemetryEvents(a: Agent): any[] {
  if (!existsSync(a.telemetryFile)) return [];
  return readFileSync(a.telemetryFile, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
}

export function readWs(a: Agent, name: string): string | undefined {
  const p = join(a.ws, name);
  return existsSync(p) ? readFileSync(p, 'utf8') : undefined;
}

/** An OpenAI-compatible provider at the fake server. */
export function openaiProvider(url: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'fake-openai', protocol: 'openai-compatible', endpoint: `${url}/v1`, model: 'fake-model', auth: { type: 'none' }, retry: { max_attempts: 1 }, ...over };
}

export const msg = (content: string) => JSON.stringify({ message: { content } });
export const call = (tool: string, args: Record<string, unknown>) => JSON.stringify({ tool_call: { tool, args } });

/**
 * One fake LLM server per suite (test/helpers/fake-llm-server.ts), restarted before a test when a failed one
 * left scripted steps behind (so one failure cannot fail the next test too); agents removed after the suite.
 */
export function useFakeLlm(suite: Test, set: (l: FakeLlm) => void, get: () => FakeLlm): void {
  suite.before(async () => set(await startFakeLlm()));
  suite.after(async () => {
    await get().close();
    removeAgents();
  });
  suite.before.each(async () => {
    if (get().pending > 0) {
      await get().close();
      set(await startFakeLlm());
    }
    get().requests.length = 0;
  });
}
