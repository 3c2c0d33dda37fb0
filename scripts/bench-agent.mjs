#!/usr/bin/env node
// Agent-loop overhead per turn, excluding the provider ("agent-loop overhead per turn
// excluding the provider"). Bundles src/agent/service.ts with esbuild (the code the runtime ships) and
// runs whole turns in process through createAgentService — system prompt built once, the real
// validator, correction builder, skill attribution and MemoryHistory — against a provider stub that
// answers at once from a script, so the time measured is the loop's own:
//   - provider floor: one await of the stub alone (what an instant provider costs the loop);
//   - a message turn (1 model output), a tool-call turn (tool_call → result → message: 2 outputs,
//     1 tool call through a stub that returns at once), a corrected turn (rejected → correction → message);
//   - each turn bare (no-op audit and telemetry), and with the audit records the loop writes in
//     production (recordValidation into an AuditLog over an in-memory file, fsync: none — the
//     fsynced cost per record is in BENCH.md "FemtoClaw validation").
//   - for scale, the real floor of a model call: the openai-compatible client (src/provider) against a
//     local node:http server that answers at once, alone and inside whole turns (HTTP_TURNS turns).
// Each turn is timed alone (process.hrtime.bigint around `await turn()`), after a warm-up, with a
// history of 20 earlier messages; p50 / p90 / p99 over the turns. Validation alone is measured by
// scripts/bench-femtoclaw.mjs; the gates of a real tool call by scripts/bench-tools.mjs.
// Usage: node scripts/bench-agent.mjs [--json] [--turns=N] [--http-turns=N]
import { build } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';

const arg = (k, d) => {
  const a = process.argv.find((x) => x.startsWith(`--${k}=`));
  return a ? Number(a.split('=')[1]) : d;
};
const TURNS = arg('turns', 20000);
const HTTP_TURNS = arg('http-turns', 2000);
const JSON_OUT = process.argv.includes('--json');

const root = new URL('..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'bench-agent-'));
const entry = join(dir, 'entry.ts');
writeFileSync(
  entry,
  `export { createAgentService } from '${root}src/agent/service.ts';
export { MemoryHistory } from '${root}src/agent/history.ts';
export { compileArgumentSchema } from '${root}src/tools/json-schema.ts';
export { AuditLog } from '${root}src/audit/log.ts';
export { recordValidation } from '${root}src/audit/protocol-audit.ts';
export { createProviderClient } from '${root}src/provider/index.ts';
export { TokenLedger } from '${root}src/kernel/ledger.ts';
`,
);
await build({ entryPoints: [entry], outfile: join(dir, 'b.mjs'), bundle: true, minify: true, platform: 'node', format: 'esm', target: 'node18', logLevel: 'error' });
const m = await import(join(dir, 'b.mjs'));
rmSync(dir, { recursive: true, force: true });

// The tools of a small agent (as in bench-femtoclaw), and one skill requiring read-file.
const schemas = {
  shell: { type: 'object', properties: { bin: { type: 'string' }, argv: { type: 'array', items: { type: 'string' }, maxItems: 64 } }, required: ['bin'], additionalProperties: false },
  'read-file': { type: 'object', properties: { path: { type: 'string', maxLength: 4096 }, max_bytes: { type: 'integer', minimum: 1 } }, required: ['path'], additionalProperties: false },
  'write-file': { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' }, append: { type: 'boolean' } }, required: ['path', 'content'], additionalProperties: false },
  'http-fetch': { type: 'object', properties: { url: { type: 'string', pattern: '^https?://' }, method: { enum: ['GET', 'POST'] } }, required: ['url'] },
  'memory-search': { type: 'object', properties: { query: { type: 'string', minLength: 1 }, limit: { type: 'integer', minimum: 1, maximum: 50 } }, required: ['query'] },
  'get-time': { type: 'object' },
  echo: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  'send-message': { type: 'object', properties: { to: { type: 'string' }, text: { type: 'string', maxLength: 2000 } }, required: ['to', 'text'], additionalProperties: false },
};
const toolInfos = Object.entries(schemas).map(([name, s]) => ({ name, description: `the ${name} tool`, input_schema: s, check: m.compileArgumentSchema(s) }));
const prim = (kind, name, spec) => ({ kind, name, labels: {}, annotations: {}, spec, origin: { file: '<bench>', specPath: ['spec'] } });
const manifest = {
  identity: prim('Identity', 'bench-agent', { personality: 'You are a small assistant on an edge board. Be brief.', locale: 'en-GB' }),
  skills: [prim('Skill', 'notes', { description: 'Reads notes', instruction: 'Read notes with read-file.', tools_required: ['read-file'], permissions: { network: false, filesystem: 'read-only' } })],
};
const TOOL_RESULT = { ok: true, result: { content: [{ type: 'text', text: '# TODO\n- buy milk\n- fix the fence\n' }] } };
const tools = { list: () => toolInfos, call: async () => TOOL_RESULT };

const MESSAGE = JSON.stringify({ message: { content: 'The build finished. '.repeat(10) } });
const TOOL_CALL = '{"tool_call":{"tool":"read-file","args":{"path":"/workspace/notes/todo.md","max_bytes":65536}}}';
const FENCED = '```json\n' + TOOL_CALL + '\n```';
const SCRIPTS = {
  'message turn (1 output)': [MESSAGE],
  'tool-call turn (tool_call → result → message)': [TOOL_CALL, MESSAGE],
  'corrected turn (code fence → correction → message)': [FENCED, MESSAGE],
};
const EARLIER = Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: i % 2 ? MESSAGE : `question number ${i}` }));

const noTelemetry = { emit() {}, latency() {}, tokenUsage() {}, close: async () => {} };
const memFile = { tail: () => ({ torn: new Uint8Array(0), tornAt: 0 }), truncate() {}, append() {}, sync() {}, close() {} };

function makeService(withAudit, http) {
  let script = [];
  let i = 0;
  const stub = { complete: async () => ({ text: script[i++], provider: 'stub', usage: { input_tokens: 500, output_tokens: 30 } }) };
  // With `http`, the server answers the next scripted output; the client is the runtime's own.
  const provider = http ? http.client : stub;
  const log = withAudit ? m.AuditLog.open({ file: memFile, now: Date.now, redact: (s) => s, fsync: 'none' }) : undefined;
  let history;
  let ids = 0;
  const svc = m.createAgentService({
    manifest,
    tools,
    provider,
    telemetry: noTelemetry,
    recordVerdict: log ? (raw, v, ctx) => m.recordValidation(log, { logInputs: true }, raw, v, ctx) : () => {},
    get history() {
      return history;
    },
    redact: (s) => s,
    now: () => performance.now(),
    newId: () => `id-${++ids}`,
    contextFiles: [],
    nativeTools: true,
    workspaceDir: '/tmp/ws',
  });
  return {
    svc,
    /** A fresh conversation of 20 earlier messages and the script of the next turn. */
    prepare(s) {
      script = s;
      i = 0;
      if (http) http.script(s);
      history = new m.MemoryHistory();
      history.messages().push(...EARLIER);
    },
  };
}

/** createAgentService reads deps.history once per turn call; a getter lets each turn start from the same conversation. */
async function timeTurns(withAudit, script, http, turns = TURNS) {
  const { svc, prepare } = makeService(withAudit, http);
  const signal = new AbortController().signal;
  const warm = Math.min(2000, turns);
  const per = [];
  for (let t = 0; t < warm + turns; t++) {
    prepare(script);
    const s = process.hrtime.bigint();
    const r = await svc.turn('please check my notes', signal);
    const us = Number(process.hrtime.bigint() - s) / 1000;
    if (r.outcome !== 'message') throw new Error(`unexpected outcome ${r.outcome}`);
    if (t >= warm) per.push(us);
  }
  return quantiles(per);
}

async function timeFloor() {
  const provider = { complete: async () => ({ text: MESSAGE, provider: 'stub' }) };
  const per = [];
  for (let t = 0; t < 2000 + TURNS; t++) {
    const s = process.hrtime.bigint();
    await provider.complete({ messages: EARLIER });
    const us = Number(process.hrtime.bigint() - s) / 1000;
    if (t >= 2000) per.push(us);
  }
  return quantiles(per);
}

function quantiles(per) {
  per.sort((a, b) => a - b);
  const q = (p) => per[Math.min(per.length - 1, Math.floor(p * per.length))];
  return { p50: q(0.5), p90: q(0.9), p99: q(0.99) };
}

/** A local OpenAI-compatible server that answers at once with the next scripted output, and the runtime's client for it. */
async function localModel() {
  let outputs = [];
  let j = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const content = outputs[j++] ?? MESSAGE;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 500, completion_tokens: 30 } }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  const store = new Map();
  const clock = { now: Date.now, monotonic: () => performance.now(), setTimeout: (fn, ms) => { const t = setTimeout(fn, ms); return { cancel: () => clearTimeout(t) }; }, setInterval: (fn, ms) => { const t = setInterval(fn, ms); return { cancel: () => clearInterval(t) }; } };
  const providerPrim = prim('Provider', 'local', { protocol: 'openai-compatible', endpoint: url, model: 'm', auth: { type: 'none' } });
  const client = m.createProviderClient({
    manifest: { ...manifest, providers: [providerPrim] },
    ledger: new m.TokenLedger({ load: async (p) => store.get(p), save: async (p, e) => void store.set(p, e) }, clock),
    secrets: { resolve: async () => '' },
    clock,
  });
  return { client, script: (s) => ((outputs = s), (j = 0)), close: () => new Promise((r) => server.close(r)) };
}

async function timeHttpFloor(http) {
  const per = [];
  const messages = [{ role: 'system', content: 'x' }, ...EARLIER, { role: 'user', content: 'please check my notes' }];
  for (let t = 0; t < 500 + HTTP_TURNS; t++) {
    http.script([MESSAGE]);
    const s = process.hrtime.bigint();
    await http.client.complete({ messages, signal: new AbortController().signal });
    const us = Number(process.hrtime.bigint() - s) / 1000;
    if (t >= 500) per.push(us);
  }
  return quantiles(per);
}

const rows = [{ name: 'provider floor: one await of the instant stub', outputs: 0, ...(await timeFloor()) }];
for (const [name, script] of Object.entries(SCRIPTS)) {
  rows.push({ name, audit: false, outputs: script.length, ...(await timeTurns(false, script)) });
  rows.push({ name: `${name}, audit in memory`, audit: true, outputs: script.length, ...(await timeTurns(true, script)) });
}
const http = await localModel();
// Turns first: the first rows against the server also warm up the client's connection pool.
const httpRows = [];
for (const [name, script] of Object.entries(SCRIPTS).slice(0, 2)) {
  httpRows.push({ name: `${name}, real client + local HTTP model`, outputs: script.length, ...(await timeTurns(false, script, http, HTTP_TURNS)) });
}
rows.push({ name: 'real client → local HTTP model answering at once (1 call)', outputs: 1, ...(await timeHttpFloor(http)) }, ...httpRows);
await http.close();

if (JSON_OUT) {
  console.log(JSON.stringify({ node: process.version, turns: TURNS, rows }));
} else {
  const f = (x) => x.toFixed(x < 10 ? 2 : 1).padStart(8);
  console.log(`Agent loop per turn (tools stubbed; provider stubbed except the last rows), ${process.version}, ${TURNS} turns per row (µs per turn)`);
  console.log(`${'case'.padEnd(80)} ${'p50'.padStart(8)} ${'p90'.padStart(8)} ${'p99'.padStart(8)}`);
  for (const r of rows) console.log(`${r.name.padEnd(80)} ${f(r.p50)} ${f(r.p90)} ${f(r.p99)}`);
}
