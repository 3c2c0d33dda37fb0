// The Level 3 part of scripts/bench.mjs, used when the manifest declares memory (BENCH.md "Level 3 agent").
// Against bare Node's first reply (its initialize reply), all timed from spawn:
//   init        claw.initialize reply                                          target <= 1.5x bare
//   query       the first claw.memory.query reply, the query written the moment the initialize reply
//               arrived (a separate start: the query must not wait for anything else)       <= 2x bare
//   RSS         VmRSS after the reply to a claw.status sent after initialize (as the Level 1 bench)  <= 1.4x
//   fill        one start per run: 10,000 entries stored (100 calls of 100), then 50 full-text queries;
//               VmHWM then                                                     <= 96 MB
// CPU time (user+sys of every thread, /proc/<pid>/task/*/schedstat) is read at each reply: it is what a
// loaded machine disturbs least, so its ratios are reported beside the wall-clock ones.
// Each run works in a copy of the manifest's directory (its .claw-data stays out of the repository); the
// start series share one copy, so every start after the first reopens an existing database, as a board does.
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Proc, awaitReply, readRssKb, readCpuMs, readMinorFaults, median, quantile } from './lib.mjs';

export const LEVEL3_TARGETS = { init: 1.5, query: 2, rss: 1.4, hwmMb: 96 };

/** A copy of the manifest's directory (YAML/JSON files only) under `dir`; returns the manifest's path there. */
export function copyAgent(manifestFile, dir) {
  mkdirSync(dir, { recursive: true });
  const src = dirname(manifestFile);
  for (const f of readdirSync(src)) if (/\.(ya?ml|json)$/.test(f)) cpSync(join(src, f), join(dir, f));
  return join(dir, manifestFile.slice(src.length + 1));
}

const line = (id, method, params) => `${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) })}\n`;
const QUERY = (text) => ({ store: 'facts', query: { type: 'semantic', text, top_k: 5 } });

/**
 * One start. mode 'status': initialize, then claw.status → RSS. mode 'query': initialize, then at once the first
 * claw.memory.query (bare answers it like any request). { initMs, initCpu, nextMs, nextCpu, rssKb, hwmKb }.
 */
export async function level3Start(kind, mode, { argv, cwd, env, initLine }) {
  const p = new Proc(kind, argv, { cwd, env });
  try {
    p.write(initLine);
    const init = await awaitReply(p, 1, 60000);
    const initCpu = readCpuMs(p.pid);
    const initFaults = readMinorFaults(p.pid);
    if (!init.msg.result) throw new Error(`${kind}: initialize failed: ${JSON.stringify(init.msg).slice(0, 400)}`);
    p.write(mode === 'query' ? line(2, 'claw.memory.query', QUERY('kettle')) : line(2, 'claw.status'));
    const next = await awaitReply(p, 2, 60000);
    const nextCpu = readCpuMs(p.pid);
    const nextFaults = readMinorFaults(p.pid);
    const mem = readRssKb(p.pid);
    if (!next.msg.result) throw new Error(`${kind}: ${mode} failed: ${JSON.stringify(next.msg).slice(0, 400)}`);
    await p.stop();
    return { t0: p.t0, initMs: init.t - p.t0, initCpu, initFaults, nextMs: next.t - p.t0, nextCpu, nextFaults, rssKb: mem.rss, hwmKb: mem.hwm };
  } finally {
    p.kill();
  }
}

const WORDS = ['kettle', 'garden', 'window', 'heating', 'door', 'lamp', 'sensor', 'battery', 'printer', 'router', 'morning', 'evening', 'kitchen', 'garage', 'boiler', 'fridge'];

/** 10,000 entries in 100 calls of 100, then 50 queries; VmHWM, and the query latencies (ms, write → reply). */
export async function level3Fill({ argv, cwd, env, initLine }, entries = 10000, queries = 50) {
  const p = new Proc('claw-fill', argv, { cwd, env });
  try {
    p.write(initLine);
    const init = await awaitReply(p, 1, 60000);
    if (!init.msg.result) throw new Error(`claw: initialize failed: ${JSON.stringify(init.msg).slice(0, 400)}`);
    p.takeLines();
    const t0 = performance.now();
    let n = 0;
    for (let call = 0; n < entries; call++) {
      const batch = [];
      for (let i = 0; i < 100 && n < entries; i++, n++) {
        batch.push({ content: `note ${n}: the ${WORDS[n % 16]} in the ${WORDS[(n * 7 + 3) % 16]} needs a look, ${WORDS[(n * 5 + 1) % 16]} reading ${n % 97}` });
      }
      const r = await p.call(line(`s${call}`, 'claw.memory.store', { store: 'facts', entries: batch, context: { request_id: `fill-${call}` } }), `s${call}`, 60000);
      if (!r.msg.result) throw new Error(`claw: store failed: ${JSON.stringify(r.msg).slice(0, 400)}`);
    }
    const storeMs = performance.now() - t0;
    const lat = [];
    for (let q = 0; q < queries; q++) {
      const r = await p.call(line(`q${q}`, 'claw.memory.query', QUERY(`${WORDS[q % 16]} ${WORDS[(q * 3 + 5) % 16]}`)), `q${q}`, 60000);
      if (!r.msg.result) throw new Error(`claw: query failed: ${JSON.stringify(r.msg).slice(0, 400)}`);
      lat.push(r.ms);
    }
    const mem = readRssKb(p.pid);
    const cpu = readCpuMs(p.pid);
    const wasm = p.logLines().find((l) => l.msg === 'memory open')?.wasm;
    await p.stop();
    return { hwmKb: mem.hwm, rssKb: mem.rss, cpuMs: cpu, storeMs, queryP50: median(lat), queryP90: quantile(lat, 0.9), wasm };
  } finally {
    p.kill();
  }
}

export const stat = (xs) => ({ median: median(xs), p90: quantile(xs, 0.9) });
