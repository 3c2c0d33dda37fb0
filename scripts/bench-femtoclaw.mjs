#!/usr/bin/env node
// FemtoClaw validation benchmark ("validation time per message, goal ≤ 50 µs p50 for a
// typical tool call"). Bundles src/femtoclaw/validate.ts with esbuild (the same compiled code the
// runtime ships), then times validateOutput on representative model outputs, in process:
//   - per message: batches of B calls timed with process.hrtime.bigint, per-call time = batch / B,
//     after a warm-up; p50 / p90 / p99 over the batches (a batch amortizes the timer's own ~50 ns).
//   - the strict parse alone and JSON.parse on the same text, for scale.
//   - the audit records of one validated output (received + validated, SHA-256, canonical JSON,
//     appended to an in-memory file with fsync: none), and the same with a real file and fsync.
// Usage: node scripts/bench-femtoclaw.mjs [--json] [--batches=N] [--batch=B]
import { build } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const arg = (k, d) => {
  const a = process.argv.find((x) => x.startsWith(`--${k}=`));
  return a ? Number(a.split('=')[1]) : d;
};
const BATCHES = arg('batches', 400);
const BATCH = arg('batch', 200);
const JSON_OUT = process.argv.includes('--json');

const root = new URL('..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'bench-femtoclaw-'));
const entry = join(dir, 'entry.ts');
writeFileSync(
  entry,
  `export { validateOutput } from '${root}src/femtoclaw/validate.ts';
export { parseStrictJson } from '${root}src/protocol/strict-json.ts';
export { compileArgumentSchema } from '${root}src/tools/json-schema.ts';
export { AuditLog } from '${root}src/audit/log.ts';
export { openAuditFile } from '${root}src/audit/node-file.ts';
export { recordValidation } from '${root}src/audit/protocol-audit.ts';
`,
);
await build({ entryPoints: [entry], outfile: join(dir, 'b.mjs'), bundle: true, minify: true, platform: 'node', format: 'esm', target: 'node18', logLevel: 'error' });
const m = await import(join(dir, 'b.mjs'));

// A registry like a small agent's: 8 tools with realistic schemas.
const schemas = {
  shell: { type: 'object', properties: { bin: { type: 'string' }, argv: { type: 'array', items: { type: 'string' }, maxItems: 64 } }, required: ['bin'], additionalProperties: false },
  'read-file': { type: 'object', properties: { path: { type: 'string', maxLength: 4096 }, max_bytes: { type: 'integer', minimum: 1 } }, required: ['path'], additionalProperties: false },
  'write-file': { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' }, append: { type: 'boolean' } }, required: ['path', 'content'], additionalProperties: false },
  'http-fetch': { type: 'object', properties: { url: { type: 'string', pattern: '^https?://' }, method: { enum: ['GET', 'POST'] }, headers: { type: 'object', additionalProperties: { type: 'string' } } }, required: ['url'] },
  'memory-search': { type: 'object', properties: { query: { type: 'string', minLength: 1 }, limit: { type: 'integer', minimum: 1, maximum: 50 } }, required: ['query'] },
  'get-time': { type: 'object' },
  echo: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  'send-message': { type: 'object', properties: { to: { type: 'string' }, text: { type: 'string', maxLength: 2000 } }, required: ['to', 'text'], additionalProperties: false },
};
const registry = new Map(Object.entries(schemas).map(([k, s]) => [k, m.compileArgumentSchema(s)]));

const CASES = {
  'tool_call (typical: read-file, 2 args)': '{"tool_call":{"tool":"read-file","args":{"path":"/workspace/notes/todo.md","max_bytes":65536}}}',
  'tool_call (shell, argv of 6)': '{"tool_call":{"tool":"shell","args":{"bin":"grep","argv":["-rn","--include=*.ts","TODO","src/","-m","20"]}}}',
  'message (200 chars)': JSON.stringify({ message: { content: 'The build finished. '.repeat(10) } }),
  'rejected: code fence': '```json\n{"tool_call":{"tool":"read-file","args":{"path":"/x"}}}\n```',
  'rejected: unknown tool': '{"tool_call":{"tool":"Read-File","args":{"path":"/x"}}}',
  'rejected: bad args': '{"tool_call":{"tool":"read-file","args":{"path":7}}}',
};

function time(fn) {
  for (let i = 0; i < BATCH * 20; i++) fn(); // warm-up: JIT, inline caches
  const per = [];
  for (let b = 0; b < BATCHES; b++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < BATCH; i++) fn();
    per.push(Number(process.hrtime.bigint() - t) / BATCH / 1000);
  }
  per.sort((a, b) => a - b);
  const q = (p) => per[Math.min(per.length - 1, Math.floor(p * per.length))];
  return { p50: q(0.5), p90: q(0.9), p99: q(0.99) };
}

const rows = [];
for (const [name, raw] of Object.entries(CASES)) {
  const v = m.validateOutput(raw, registry);
  rows.push({ name, verdict: v.valid ? 'valid' : `${v.step}/${v.reason}`, bytes: Buffer.byteLength(raw), ...time(() => m.validateOutput(raw, registry)) });
}
const typical = CASES['tool_call (typical: read-file, 2 args)'];
const typicalBytes = Buffer.from(typical);
rows.push({ name: 'same, input as bytes (UTF-8 decode included)', verdict: 'valid', bytes: typicalBytes.length, ...time(() => m.validateOutput(typicalBytes, registry)) });
rows.push({ name: 'strict parse only (typical)', verdict: '-', bytes: typicalBytes.length, ...time(() => m.parseStrictJson(typical)) });
rows.push({ name: 'JSON.parse (typical), for scale', verdict: '-', bytes: typicalBytes.length, ...time(() => JSON.parse(typical)) });

// Audit records of one accepted output: in-memory file, then a real file with fsync per record.
const mem = { tail: () => ({ torn: new Uint8Array(0), tornAt: 0 }), truncate() {}, append() {}, sync() {}, close() {} };
const memLog = m.AuditLog.open({ file: mem, now: Date.now, redact: (s) => s, fsync: 'none' });
const verdict = m.validateOutput(typical, registry);
rows.push({ name: 'audit records of it (2 records, in memory)', verdict: '-', bytes: 0, ...time(() => m.recordValidation(memLog, { logInputs: true }, typical, verdict)) });
const fileLog = m.AuditLog.open({ file: m.openAuditFile(join(dir, 'audit.jsonl')), now: Date.now, redact: (s) => s, fsync: 'record' });
const saved = { b: BATCHES };
const fsyncTimes = [];
for (let i = 0; i < Math.min(200, saved.b); i++) {
  const t = process.hrtime.bigint();
  m.recordValidation(fileLog, { logInputs: true }, typical, verdict);
  fsyncTimes.push(Number(process.hrtime.bigint() - t) / 1000);
}
fileLog.close();
fsyncTimes.sort((a, b) => a - b);
rows.push({ name: 'audit records of it (2 records, file, fsync each)', verdict: '-', bytes: 0, p50: fsyncTimes[fsyncTimes.length >> 1], p90: fsyncTimes[Math.floor(fsyncTimes.length * 0.9)], p99: fsyncTimes[Math.floor(fsyncTimes.length * 0.99)] });
rmSync(dir, { recursive: true, force: true });

const typicalP50 = rows[0].p50;
if (JSON_OUT) {
  console.log(JSON.stringify({ node: process.version, batches: BATCHES, batch: BATCH, rows, goal_us: 50, typical_p50_us: typicalP50, pass: typicalP50 <= 50 }));
} else {
  const f = (x) => x.toFixed(x < 10 ? 2 : 1).padStart(8);
  console.log(`FemtoClaw validation, ${process.version}, ${BATCHES} batches × ${BATCH} calls (µs per call)`);
  console.log(`${'case'.padEnd(52)} ${'verdict'.padEnd(24)} ${'bytes'.padStart(5)} ${'p50'.padStart(8)} ${'p90'.padStart(8)} ${'p99'.padStart(8)}`);
  for (const r of rows) console.log(`${r.name.padEnd(52)} ${r.verdict.padEnd(24)} ${String(r.bytes).padStart(5)} ${f(r.p50)} ${f(r.p90)} ${f(r.p99)}`);
  console.log(`goal: typical tool call p50 ≤ 50 µs → ${typicalP50.toFixed(2)} µs: ${typicalP50 <= 50 ? 'met' : 'NOT met'}`);
}
