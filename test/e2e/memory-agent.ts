// A Level 3 agent for the memory e2e suites: TV-L3-01's manifest (all 9 core primitives) with extra stores,
// in a temp directory with its own claw.runtime.yaml, started through dist/claw.mjs and initialized.
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initParams, startClaw, type ClawRun } from './helpers/claw-process.ts';

export const IDENTITY = 'full-agent';
/** Entry ids of a database made by this runtime: the entry's seq in decimal (src/memory/stores/schema.ts). */
export const ENTRY_ID = /^[1-9][0-9]*$/;
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** TV-L3-01's manifest; `stores` replaces its one `context` conversation store (YAML list items, 8 spaces). */
export function l3Manifest(stores?: string, memory = true): string {
  const mem = `  memory:
    inline:
      stores:
${
  stores ??
  `        - name: "context"
          type: "conversation"
          backend: "sqlite"`
}
`;
  return `claw: "0.3.0"
kind: Claw
metadata:
  name: "${IDENTITY}"
spec:
  identity:
    inline:
      personality: "You are an autonomous research coordinator."
      autonomy: "autonomous"
  providers:
    - inline:
        protocol: "anthropic-native"
        endpoint: "https://api.anthropic.com/v1"
        model: "claude-sonnet-4-6"
        auth: { type: "bearer", secret_ref: "ANTHROPIC_KEY" }
  channels:
    - inline: { type: "cli", transport: "stdio", auth: { secret_ref: "LOCAL_CLI_TOKEN" } }
  tools:
    - inline:
        name: "search"
        description: "Search the web"
        input_schema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] }
  skills:
    - inline:
        name: "deep-research"
        description: "Multi-step research workflow"
        tools_required: ["search"]
        instruction: "Search for the topic, then synthesize findings."
${memory ? mem : ''}  sandbox:
    inline:
      level: "process"
  policies:
    - inline:
        rules:
          - { id: "allow-all", action: "allow", scope: "all" }
  swarm:
    inline:
      topology: "peer-to-peer"
      agents:
        - identity_ref: "full-agent"
          role: "peer"
      coordination:
        message_passing: "direct"
        backend: "in-process"
        concurrency:
          max_parallel: 3
      aggregation:
        strategy: "merge"
`;
}

export interface AgentDir {
  dir: string;
  manifest: string;
}

/** A temp directory holding claw.yaml and claw.runtime.yaml (`search` bound to the echo builtin, plus `config`). */
export function agentDir(o: { stores?: string; memory?: boolean; config?: string; dir?: string } = {}): AgentDir {
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'claw-e2e-memory-'));
  writeFileSync(join(dir, 'claw.yaml'), l3Manifest(o.stores, o.memory ?? true));
  writeFileSync(join(dir, 'claw.runtime.yaml'), `tools:\n  search: { builtin: echo }\n${o.config ?? ''}`);
  return { dir, manifest: join(dir, 'claw.yaml') };
}

/** Start `claw run` on the directory and initialize; asserts the session reached level 3 with memory. */
export async function startAgent(a: AgentDir, opts: { wrap?: string[]; env?: Record<string, string> } = {}): Promise<ClawRun> {
  const c = startClaw(['run', a.manifest], { cwd: a.dir, wrap: opts.wrap, env: opts.env });
  const r = await c.request('claw.initialize', initParams(), 'init');
  assert.ok(r.result, `initialize failed: ${JSON.stringify(r)} ${c.stderr().slice(-2000)}`);
  assert.ok('memory' in r.result.capabilities, JSON.stringify(r.result));
  return c;
}

let n = 0;
export const rid = () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;

export function store(c: ClawRun, storeName: string, entries: unknown[], requestId = rid()) {
  return c.request('claw.memory.store', { store: storeName, entries, context: { request_id: requestId } });
}
export function query(c: ClawRun, storeName: string, q: unknown, extra: Record<string, unknown> = {}) {
  return c.request('claw.memory.query', { store: storeName, query: q, ...extra });
}
/** Every entry of a conversation store, chronological. */
export async function all(c: ClawRun, storeName = 'context'): Promise<any[]> {
  const r = await query(c, storeName, { type: 'time-range', time_range: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' } }, {});
  assert.ok(r.result, JSON.stringify(r));
  return r.result.entries;
}
