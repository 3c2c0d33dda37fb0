#!/usr/bin/env node
// claw-edge tool-call benchmark: `claw run <manifest>` with a Level 2 manifest against bare Node
// NDJSON processes doing the same I/O. Every process is started with process.execPath, the same node
// flags, the same argv after the script (`run <manifest>`), the same cwd (the agent's temp dir) and
// environment, and is driven over the same stdio pipes.
//
//   1. echo throughput   fresh process, initialize, --tput-warmup lines answered, then N pipelined
//                        `claw.tool.call` of the in-process `echo` builtin (unique request_ids, identity
//                        autonomous, one allow-all policy, sandbox level process) in one write → req/s
//                        until the N-th reply, against scripts/bench/bare.mjs fed the same lines
//                        and the claw process's CPU per echo call (bound ≤ 20 µs: the gates and the tool are
//                        one async path; req/s against bare is reported, no longer a goal), and claw's own
//                        `claw.status` rate on the same agent
//   2. exec latency      sequential `claw.tool.call` of an exec tool bound to /bin/true, per sandbox
//                        variant (each its own agent), against scripts/bench-tools/bare-spawn.mjs
//                        (one line → spawn('/bin/true') → exit → one line), calls interleaved
//                        claw/bare; median and p90 per call, difference of medians (target ≤ +2 ms).
//                        A probe call records what the sandbox used (process tree, namespaces,
//                        capabilities, limits, cgroup); a second bare-spawn process then replays the
//                        same wrapper chain (bwrap … [prlimit …] /bin/true) in the same rounds, so the
//                        difference splits into "wrapper binaries" and "claw's own work". The replay
//                        does not move itself into a cgroup: a run cgroup's cgroup.procs write (a
//                        cgroup migration, kernel time) is counted in "claw's own work".
//                        CPU per call: schedstat of each process, cutime+cstime of its children.
//   3. MCP round trip    sequential `claw.tool.call` of server-everything's `echo` through mcp_source
//                        against scripts/bench-tools/bare-mcp.mjs (a bare proxy to the same server).
//
// Usage: node scripts/bench-tools.mjs [--quick] [--json] [--no-mcp] [--no-probe]
//          [--requests=N] [--tput-runs=N] [--tput-warmup=N] [--calls=N] [--warmup=N] [--mcp-calls=N]
//          [--variants=a,b,c,d] [--timeout=S] [--node-flags="..."] [--claw=FILE]
//   --quick     fewer iterations (smoke run)
//   --json      print only the one-line JSON summary on stdout (progress still on stderr)
//   --no-mcp    skip the MCP round trip
//   --no-probe  skip the sandbox probe and the wrapper-chain replay
//   --tput-warmup  lines answered in each throughput process before the timed batch (same kind of
//               line, other ids; default 1000; 0 times a cold process like scripts/bench.mjs does)
//   --variants  sandbox variants of section 2 (a: level none, b: level process, c: + resource_limits,
//               d: + filesystem read-only and network deny)
//   --claw      another build of the runtime (A/B a scratch build; default dist/claw.mjs)
// Requires a built dist/claw.mjs (`npm run build`). Linux, Node 18+, node: built-ins only.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus, arch, platform, loadavg } from 'node:os';
import { join, resolve, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, DEFAULT_CLAW, BARE, parseArgs, guardChildren, runMain, killAll, extraPids, sleep, spawnAndInit, initializeLine, summaryHead, awaitResponses, processTable, descendants, cmdline, readCgroup, readCpuMs, readChildCpuMs, quantile, median, f2, f3, int, sgn, r2, r3, table } from './bench/lib.mjs';

const BARE_SPAWN = join(ROOT, 'scripts', 'bench-tools', 'bare-spawn.mjs');
const BARE_MCP = join(ROOT, 'scripts', 'bench-tools', 'bare-mcp.mjs');
const MCP_SERVER = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const TARGETS = { echoCpuUsPerCall: 20, execDeltaMs: 2 };
const AGENT = 'bench-agent';
const ECHO_TEXT = 'bench-tools echo payload';

/** The sandbox variants of section 2. */
const VARIANTS = {
  a: { label: 'level none', sandbox: { level: 'none' } },
  b: { label: 'level process, nothing declared', sandbox: { level: 'process' } },
  c: {
    label: 'level process + resource_limits',
    sandbox: { level: 'process', resource_limits: { memory_mb: 256, max_open_files: 256, max_processes: 64 } },
  },
  d: {
    label: 'level process + fs read-only, net deny',
    sandbox: { level: 'process', capabilities: { filesystem: { mode: 'read-only' }, network: { mode: 'deny' } } },
  },
};

// ---------- options ----------
function parseOptions(argv) {
  const { flags: o, values, num } = parseArgs(argv, {
    name: 'bench-tools',
    usage:
      'usage: node scripts/bench-tools.mjs [--quick] [--json] [--no-mcp] [--no-probe] [--requests=N] [--tput-runs=N] [--tput-warmup=N] [--calls=N] [--warmup=N] [--mcp-calls=N] [--variants=a,b,c,d] [--timeout=S] [--node-flags="..."] [--claw=FILE]\n',
    defaults: { quick: false, json: false, mcp: true, probe: true },
    flags: { '--quick': ['quick', true], '--json': ['json', true], '--no-mcp': ['mcp', false], '--no-probe': ['probe', false] },
    valueNames: ['requests', 'tput-runs', 'tput-warmup', 'calls', 'warmup', 'mcp-calls', 'variants', 'timeout', 'node-flags', 'claw'],
  });
  const variants = (values.variants ?? 'a,b,c,d').split(',').map((s) => s.trim()).filter(Boolean);
  for (const v of variants) {
    if (!VARIANTS[v]) {
      process.stderr.write(`bench-tools: unknown variant ${v} (known: ${Object.keys(VARIANTS).join(', ')})\n`);
      process.exit(2);
    }
  }
  return {
    ...o, // quick, json, mcp, probe
    requests: num('requests', o.quick ? 5000 : 20000),
    tputRuns: num('tput-runs', o.quick ? 2 : 5),
    calls: num('calls', o.quick ? 50 : 200),
    warmup: num('warmup', o.quick ? 5 : 20),
    mcpCalls: num('mcp-calls', o.quick ? 50 : 200),
    // Steady state: both processes get the same warm-up, long enough for V8 to finish optimizing the
    // request path (a long-running agent's state); --tput-warmup=1000 shows the warm-up phase instead.
    tputWarmup: values['tput-warmup'] === '0' ? 0 : num('tput-warmup', o.quick ? 5000 : 20000),
    variants,
    timeoutS: num('timeout', o.quick ? 90 : 300),
    nodeFlags: (values['node-flags'] ?? '').split(/\s+/).filter(Boolean),
    claw: values.claw ? resolve(values.claw) : DEFAULT_CLAW,
  };
}
const opt = parseOptions(process.argv.slice(2));
const CLAW = opt.claw;
const progress = (s) => process.stderr.write(`bench-tools: ${s}\n`);

/** The bench's temp dir: removed on every way out (normal end, error, global timeout, signal). */
let tmpRoot;
function removeTmp() {
  if (!tmpRoot) return;
  try {
    rmSync(tmpRoot, { recursive: true, force: true });
  } catch {}
  tmpRoot = undefined;
}
// Nothing may outlive the bench: children (with their descendants) killed, the temp dir removed, on every way out.
const globalTimer = guardChildren({ name: 'bench-tools', timeoutS: opt.timeoutS, tree: true, onExit: removeTmp });

// ---------- statistics ----------
const stat = (xs) => ({ median: median(xs), p90: quantile(xs, 0.9), min: Math.min(...xs.filter(Number.isFinite)) });
const rs = (s) => (s ? Object.fromEntries(Object.entries(s).map(([k, v]) => [k, r2(v)])) : null);

// ---------- the agents ----------
const PROBE_SCRIPT = [
  'for n in pid net mnt ipc uts user cgroup; do printf "ns.%s=%s\\n" "$n" "$(readlink /proc/self/ns/$n)"; done',
  'sed -n "s/^/cgroup=/p" /proc/self/cgroup',
  'grep -E "^Max (data size|open files|processes|cpu time)" /proc/self/limits | sed "s/^/limit=/"',
  'sed -n "s/^CapEff:[[:space:]]*/capeff=/p" /proc/self/status',
  'printf "cwd=%s\\n" "$PWD"',
  'sleep 0.4',
].join('; ');

/** TV-L2-01-like manifest (test/e2e/helpers/l2-agent.ts): one allow-all policy, identity autonomous. */
function manifestFor(sandbox, extraTools = []) {
  return {
    claw: '0.3.0',
    kind: 'Claw',
    metadata: { name: AGENT, version: '1.0.0' },
    spec: {
      identity: { inline: { personality: 'You are a benchmark agent.', autonomy: 'autonomous' } },
      providers: [{ inline: { protocol: 'openai-compatible', endpoint: 'http://localhost:11434/v1', model: 'llama3', auth: { type: 'none' } } }],
      channels: [{ inline: { type: 'cli', transport: 'stdio', auth: { secret_ref: 'LOCAL_CLI_TOKEN' } } }],
      tools: [
        {
          inline: {
            name: 'echo',
            description: 'Returns the input text',
            input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
          },
        },
        { inline: { name: 't', description: '/bin/true', input_schema: { type: 'object' } } },
        { inline: { name: 'probe', description: 'reports its sandbox', input_schema: { type: 'object' } } },
        ...extraTools,
      ],
      sandbox: { inline: sandbox },
      policies: [{ inline: { rules: [{ id: 'allow-all', action: 'allow', scope: 'all' }] } }],
    },
  };
}

/** A temp dir with claw.yaml (JSON is YAML 1.2) and claw.runtime.yaml; the same manifest goes inline in initialize. */
function makeAgent(tmp, name, sandbox, extraTools) {
  const dir = join(tmp, name);
  mkdirSync(dir);
  const manifest = manifestFor(sandbox, extraTools);
  const file = join(dir, 'claw.yaml');
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  const runtime = {
    data_dir: './data',
    tools: {
      t: { exec: { bin: '/bin/true' } },
      probe: { exec: { bin: '/bin/sh', argv: ['-c', PROBE_SCRIPT] } },
    },
  };
  writeFileSync(join(dir, 'claw.runtime.yaml'), `${JSON.stringify(runtime, null, 2)}\n`);
  const initLine = initializeLine('claw-bench-tools', manifest);
  return { dir, file, initLine, spawnOpts: { cwd: dir, env: { ...process.env } } };
}

const toolCallLine = (id, name, args) =>
  `{"jsonrpc":"2.0","id":${id},"method":"claw.tool.call","params":{"name":"${name}","arguments":${JSON.stringify(args)},"context":{"request_id":"r-${id}","identity":"${AGENT}"}}}\n`;

async function startInitialized(kind, script, agent) {
  const { p, msg } = await spawnAndInit(kind, [...opt.nodeFlags, script, 'run', agent.file], agent.spawnOpts, agent.initLine, 20000, { stampAtArrival: true });
  p.takeLines();
  if (!msg.result) {
    p.kill();
    throw new Error(`${kind}: initialize failed: ${JSON.stringify(msg).slice(0, 500)}; stderr: ${p.stderrTail.slice(-1500)}`);
  }
  p.init = msg.result;
  return p;
}

// ---------- 1. pipelined echo / status throughput ----------
async function throughput(kind, agent, payloads) {
  const script = kind === 'bare' ? BARE : CLAW;
  const p = await startInitialized(kind, script, agent);
  try {
    const n = opt.requests;
    if (opt.tputWarmup > 0) {
      // Warm-up in the same process (JIT, buffers): answered and verified before the timed batch.
      p.write(kind === 'claw-status' ? payloads.statusWarm : payloads.echoWarm);
      const { msgs: warm } = await awaitResponses(p, opt.tputWarmup, 120000); // notifications among the lines are waited past
      p.takeLines();
      const bad = warm.find((m) => !m.result);
      if (bad) throw new Error(`${kind}: warm-up reply without result: ${JSON.stringify(bad).slice(0, 400)}`);
    }
    const payload = kind === 'claw-status' ? payloads.status : payloads.echo; // bare gets the echo lines
    const cpu0 = readCpuMs(p.pid, false);
    const t0 = performance.now();
    p.write(payload);
    const { t: t1, msgs: lines } = await awaitResponses(p, n, 120000);
    const cpuMs = readCpuMs(p.pid, false) - cpu0;
    const ms = t1 - t0;
    const replyBytes = Buffer.byteLength(JSON.stringify(lines[0])) + 1;
    p.takeLines();
    // Verify outside the timed window: every id answered exactly once with the right result.
    const seen = new Uint8Array(n + 2);
    let errors = 0;
    let firstBad;
    for (const m of lines) {
      const good =
        m.result &&
        typeof m.id === 'number' &&
        m.id >= 2 &&
        m.id <= n + 1 &&
        !seen[m.id] &&
        (kind !== 'claw-echo' || (m.result.content?.[0]?.text === ECHO_TEXT && !m.result.isError));
      if (good) seen[m.id] = 1;
      else {
        errors++;
        firstBad ??= m;
      }
    }
    if (lines.length !== n || errors > 0) {
      throw new Error(`${kind}: ${lines.length} replies for ${n} requests, ${errors} bad/error/duplicate; first: ${JSON.stringify(firstBad).slice(0, 400)}`);
    }
    const exit = await p.stop();
    return { ms, rps: (n / ms) * 1000, cpuUsPerReq: (cpuMs * 1000) / n, replyBytes, cleanExit: exit.clean };
  } finally {
    p.kill();
  }
}

// ---------- 2. exec latency per sandbox variant ----------
/** Reads what the sandbox used for one call of the `probe` tool: outside (process tree), inside (its own report). */
async function probeSandbox(claw, id) {
  const own = {};
  for (const n of ['pid', 'net', 'mnt', 'ipc', 'uts', 'user', 'cgroup']) {
    try {
      own[n] = readlinkSync(`/proc/self/ns/${n}`);
    } catch {}
  }
  let last;
  let done = false;
  const watcher = (async () => {
    while (!done) {
      const table = processTable();
      const below = descendants(claw.pid, table);
      if (below.some((p) => table.get(p)?.comm === 'sleep')) {
        const snap = below.map((p) => ({ pid: p, ppid: table.get(p).ppid, comm: table.get(p).comm, argv: cmdline(p), cgroup: readCgroup(p) }));
        // Keep only complete views: a process that exited between the scan and the reads has no argv.
        if (snap.every((x) => x.argv && x.argv.length > 0)) last = snap;
      }
      await sleep(5);
    }
  })();
  let r;
  try {
    r = await claw.call(toolCallLine(id, 'probe', {}), id, 20000);
  } finally {
    done = true;
    await watcher;
  }
  if (!r.msg.result || r.msg.result.isError) throw new Error(`probe call failed: ${JSON.stringify(r.msg).slice(0, 600)}`);
  const text = r.msg.result.content.map((b) => b.text ?? '').join('');
  const inside = { ns: {}, cgroup: [], limits: {}, capEff: undefined, cwd: undefined };
  for (const line of text.split('\n')) {
    const m = /^([a-z.]+)=(.*)$/.exec(line);
    if (!m) continue;
    if (m[1].startsWith('ns.')) inside.ns[m[1].slice(3)] = m[2];
    else if (m[1] === 'cgroup') inside.cgroup.push(m[2]);
    else if (m[1] === 'limit') {
      const l = /^Max (.+?)\s{2,}(\S+)\s+(\S+)/.exec(m[2]);
      if (l) inside.limits[l[1]] = l[2];
    } else if (m[1] === 'capeff') inside.capEff = m[2];
    else if (m[1] === 'cwd') inside.cwd = m[2];
  }
  const newNs = Object.keys(own).filter((n) => inside.ns[n] && inside.ns[n] !== own[n]);
  // The wrapper chain: the process claw spawned (after its execs), down to the tool (sh -c …).
  const tree = last ?? [];
  const top = tree.find((p) => p.ppid === claw.pid);
  const wrappers = [];
  let cgroupDir;
  for (const p of tree) {
    const runCg = p.cgroup.find((l) => l.includes('/claw-edge/run-'));
    if (runCg) cgroupDir ??= runCg.slice(runCg.indexOf('/claw-edge/'));
  }
  for (let p = top; p && p.comm !== 'sh' && p.comm !== 'sleep'; p = tree.find((q) => q.ppid === p.pid)) wrappers.push(p.comm);
  return { inside, newNs, top, wrappers, cgroupDir, tree };
}

/** The bench's own soft limits, keyed like the probe's ("data size", "open files", "processes", "cpu time"). */
function ownLimits() {
  const out = {};
  try {
    for (const line of readFileSync('/proc/self/limits', 'utf8').split('\n')) {
      const l = /^Max (data size|open files|processes|cpu time)\s{2,}(\S+)/.exec(line);
      if (l) out[l[1]] = l[2];
    }
  } catch {}
  return out;
}

/**
 * The argv claw spawned for the probe, rewritten to run /bin/true: the top process's cmdline (after
 * any `sh` cgroup-entry exec it is bubblewrap's, holding the whole rest of the chain) with the probe
 * command replaced and the per-call private dir replaced by one of ours. An `sh -c 'exec "$@"'`
 * prefix stands in for the cgroup-entry shell (the write to cgroup.procs itself is not replayed).
 */
function replayChain(probe, scratchDir) {
  const argv = probe.top?.argv;
  if (!argv) return undefined;
  const tail = ['/bin/sh', '-c', PROBE_SCRIPT];
  const at = argv.findIndex((a, i) => tail.every((t, j) => argv[i + j] === t));
  if (at <= 0) return undefined; // the tool itself was the top process: no wrapper to replay
  // The run dir, and the private parent holding it (run-dirs.ts), both stand for the scratch directory.
  const runDir = /^.*\/claw-private-\d+-[^/]+(?:\/run-[^/]+)?/;
  let out = [...argv.slice(0, at).map((a) => a.replace(runDir, scratchDir)), '/bin/true'];
  if (probe.cgroupDir) out = ['/bin/sh', '-c', 'exec "$@"', 'claw-enter-cgroup', ...out];
  return out;
}

function describeSandbox(v, probe, notes) {
  if (!probe) return `not probed (--no-probe)${notes.length ? `; notes: ${notes.join(' | ')}` : ''}`;
  const parts = [];
  const w = probe?.wrappers ?? [];
  if (w.length === 0) parts.push('plain spawn (no wrapper)');
  else parts.push(w.join(' → ') + ' → tool');
  if (probe?.cgroupDir) parts.push(`run cgroup ${probe.cgroupDir.replace(/run-.*/, 'run-*')}`);
  const bw = probe?.top?.argv?.[0]?.endsWith('bwrap') ? probe.top.argv : undefined;
  if (bw) {
    const flags = [];
    if (bw.includes('--unshare-net')) flags.push('--unshare-net');
    const i = bw.findIndex((a) => a === '--bind' || a === '--ro-bind');
    if (i >= 0 && bw[i + 1] === '/') flags.push(`${bw[i]} / /`);
    if (bw.some((a, j) => a === '--tmpfs' && /\/claw-private-/.test(bw[j + 1] ?? ''))) flags.push('--tmpfs <private dir>');
    if (bw.some((a, j) => a === '--tmpfs' && bw[j + 1] === '/sys/fs/cgroup')) flags.push('--tmpfs /sys/fs/cgroup');
    parts.push(`bwrap ${flags.join(' ')}`.trim());
  }
  if (probe?.newNs?.length) parts.push(`new ns: ${probe.newNs.join(',')}`);
  if (probe?.inside?.capEff !== undefined) parts.push(/^0+$/.test(probe.inside.capEff) ? 'no capabilities' : `CapEff ${probe.inside.capEff}`);
  // Soft limits that differ from the bench's own (which the runtime and the tool would otherwise inherit).
  const lim = probe?.inside?.limits ?? {};
  const own = ownLimits();
  const set = Object.entries(lim).filter(([k, x]) => own[k] !== undefined && own[k] !== x);
  parts.push(set.length ? `rlimits: ${set.map(([k, x]) => `${k}=${x}`).join(', ')}` : 'rlimits: inherited');
  if (notes.length) parts.push(`notes: ${notes.join(' | ')}`);
  return parts.join('; ');
}

async function execVariant(key, tmp, scratch) {
  const v = VARIANTS[key];
  const agent = makeAgent(tmp, `exec-${key}`, v.sandbox);
  const claw = await startInitialized('claw', CLAW, agent);
  let bare;
  let replayer;
  try {
    bare = await startInitialized('bare-spawn', BARE_SPAWN, agent);
    replayer = await startInitialized('bare-spawn (replay)', BARE_SPAWN, agent);
    const notes = claw
      .logLines()
      .filter((l) => l.msg === 'sandbox' && l.tool === 't')
      .map((l) => l.note);
    let id = 100;
    let probe;
    let chain;
    if (opt.probe) {
      probe = await probeSandbox(claw, ++id);
      chain = replayChain(probe, scratch);
    }
    const spawnLine = (i) => `{"jsonrpc":"2.0","id":${i},"method":"bench.spawn","params":${JSON.stringify({ argv: chain, cwd: '/' })}}\n`;
    const check = (who, msg) => {
      if (!msg.result || msg.result.isError || (msg.result.exitCode !== undefined && msg.result.exitCode !== 0)) {
        throw new Error(`${who}: call failed: ${JSON.stringify(msg).slice(0, 600)}`);
      }
    };
    // Interleaved: every round does one call of each, the order rotating, so noise hits all alike.
    const kinds = chain ? ['claw', 'bare', 'chain'] : ['claw', 'bare'];
    const res = { claw: [], bare: [], chain: [] };
    const round = async (i, record) => {
      const order = kinds.map((_, j) => kinds[(i + j) % kinds.length]);
      for (const k of order) {
        const cid = ++id;
        const r =
          k === 'claw'
            ? await claw.call(toolCallLine(cid, 't', {}), cid)
            : k === 'bare'
              ? await bare.call(toolCallLine(cid, 't', {}), cid)
              : await replayer.call(spawnLine(cid), cid);
        check(k, r.msg);
        if (record) res[k].push(r.ms);
      }
    };
    for (let i = 0; i < opt.warmup; i++) await round(i, false);
    const procs = { claw, bare, replay: replayer };
    const cpu0 = Object.fromEntries(Object.entries(procs).map(([k, p]) => [k, { self: readCpuMs(p.pid, false), kids: readChildCpuMs(p.pid) }]));
    for (let i = 0; i < opt.calls; i++) await round(i, true);
    // CPU per call: the process itself (schedstat) and its reaped children (wrappers + tool, 10 ms ticks).
    const cpu = Object.fromEntries(
      Object.entries(procs).map(([k, p]) => [k, { self: (readCpuMs(p.pid, false) - cpu0[k].self) / opt.calls, kids: (readChildCpuMs(p.pid) - cpu0[k].kids) / opt.calls }]),
    );
    const exit = await claw.stop();
    await bare.stop();
    await replayer.stop();
    return {
      key,
      label: v.label,
      sandbox: v.sandbox,
      notes,
      used: describeSandbox(v, probe, notes),
      wrappers: probe?.wrappers ?? [],
      newNamespaces: probe?.newNs ?? [],
      cgroup: probe?.cgroupDir ? probe.cgroupDir.replace(/run-.*/, 'run-*') : null,
      limitsInside: probe?.inside?.limits ?? {},
      chain: chain ? chain.map((a) => (a === PROBE_SCRIPT ? '<probe>' : a)) : null,
      claw: stat(res.claw),
      bare: stat(res.bare),
      replay: chain ? stat(res.chain) : null,
      cpu,
      cleanExit: exit.clean,
    };
  } finally {
    claw.kill();
    bare?.kill();
    replayer?.kill();
  }
}

// ---------- 3. MCP round trip ----------
async function mcpBench(tmp) {
  const uri = `stdio://${process.execPath}?arg=${encodeURIComponent(MCP_SERVER)}&arg=stdio`;
  const tool = { inline: { name: 'mcp-echo', mcp_source: { uri, tool_name: 'echo' } } };
  const agent = makeAgent(tmp, 'mcp', VARIANTS.b.sandbox, [tool]);
  const claw = await startInitialized('claw', CLAW, agent);
  let bare;
  try {
    bare = await startInitialized('bare-mcp', BARE_MCP, agent);
    if (bare.init.serverPid) extraPids.add(bare.init.serverPid);
    let id = 100;
    const res = { claw: [], bare: [] };
    const round = async (i, record) => {
      for (const k of i % 2 ? ['bare', 'claw'] : ['claw', 'bare']) {
        const cid = ++id;
        const p = k === 'claw' ? claw : bare;
        const r = await p.call(toolCallLine(cid, 'mcp-echo', { message: 'over MCP' }), cid);
        const text = r.msg.result?.content?.[0]?.text;
        if (text !== 'Echo: over MCP') throw new Error(`${k}: unexpected MCP reply ${JSON.stringify(r.msg).slice(0, 500)}`);
        if (record) res[k].push(r.ms);
      }
    };
    for (let i = 0; i < opt.warmup; i++) await round(i, false);
    for (let i = 0; i < opt.mcpCalls; i++) await round(i, true);
    await claw.stop();
    await bare.stop();
    return { claw: stat(res.claw), bare: stat(res.bare), calls: opt.mcpCalls };
  } finally {
    claw.kill();
    bare?.kill();
  }
}

function doctorLayers() {
  try {
    const out = execFileSync(process.execPath, [CLAW, 'doctor', '--json'], { encoding: 'utf8', timeout: 20000, stdio: ['ignore', 'pipe', 'ignore'] });
    const j = JSON.parse(out);
    return (j.layers ?? []).map((l) => ({ name: l.name, available: l.available, detail: l.detail }));
  } catch (e) {
    return [{ name: 'claw doctor --json', available: false, detail: String(e.message ?? e).slice(0, 200) }];
  }
}

// ---------- main ----------
async function main() {
  if (!existsSync(CLAW)) throw new Error(`${CLAW} not found: run \`npm run build\` first`);
  if (platform() !== 'linux') throw new Error('bench-tools needs Linux (/proc, the process sandbox)');
  const tmp = mkdtempSync(join(tmpdir(), 'claw-bench-tools-'));
  tmpRoot = tmp;
  const scratch = join(tmp, 'replay-workdir');
  mkdirSync(scratch);
  try {
    progress(`node ${process.version} ${platform()}-${arch()}, ${cpus().length} CPUs, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    const layers = doctorLayers();
    progress(`claw doctor: ${layers.map((l) => `${l.name} ${l.available ? 'yes' : 'no'}`).join(', ')}`);

    // 1. echo throughput
    const echoAgent = makeAgent(tmp, 'echo', VARIANTS.b.sandbox);
    let echo = '';
    let status = '';
    for (let id = 2; id <= opt.requests + 1; id++) {
      echo += toolCallLine(id, 'echo', { text: ECHO_TEXT });
      status += `{"jsonrpc":"2.0","id":${id},"method":"claw.status"}\n`;
    }
    // Warm-up lines: ids (and request_ids) after the timed batch's, so every request_id is unique.
    let echoWarm = '';
    let statusWarm = '';
    for (let id = opt.requests + 2; id < opt.requests + 2 + opt.tputWarmup; id++) {
      echoWarm += toolCallLine(id, 'echo', { text: ECHO_TEXT });
      statusWarm += `{"jsonrpc":"2.0","id":${id},"method":"claw.status"}\n`;
    }
    const payloads = { echo: Buffer.from(echo), status: Buffer.from(status), echoWarm: Buffer.from(echoWarm), statusWarm: Buffer.from(statusWarm) };
    const lineBytes = { echo: payloads.echo.length / opt.requests, status: payloads.status.length / opt.requests };
    progress(
      `1. throughput: a discarded run of claw echo and bare, then ${opt.tputRuns} runs each of ${opt.requests} pipelined lines (echo ${lineBytes.echo.toFixed(0)} B/line), each after ${opt.tputWarmup} warm-up lines in the same process`,
    );
    await throughput('claw-echo', echoAgent, payloads);
    await throughput('bare', echoAgent, payloads);
    const tput = { 'claw-echo': [], bare: [], 'claw-status': [] };
    const tkinds = ['claw-echo', 'bare', 'claw-status'];
    for (let i = 0; i < opt.tputRuns; i++) {
      for (let j = 0; j < tkinds.length; j++) {
        const k = tkinds[(i + j) % tkinds.length];
        tput[k].push(await throughput(k, echoAgent, payloads));
      }
    }

    // 2. exec latency
    const exec = [];
    for (const key of opt.variants) {
      progress(`2${key}. exec /bin/true, ${VARIANTS[key].label}: ${opt.warmup} warm-up + ${opt.calls} calls each, interleaved`);
      exec.push(await execVariant(key, tmp, scratch));
    }

    // 3. MCP
    let mcp;
    if (opt.mcp) {
      if (!existsSync(MCP_SERVER)) progress(`3. MCP skipped: ${relative(ROOT, MCP_SERVER)} not installed`);
      else {
        progress(`3. MCP echo (server-everything): ${opt.warmup} warm-up + ${opt.mcpCalls} calls each, interleaved`);
        mcp = await mcpBench(tmp);
      }
    }

    // ---------- summary ----------
    const ts = (k, f) => stat(tput[k].map((r) => r[f]));
    const t = { echo: ts('claw-echo', 'rps'), bare: ts('bare', 'rps'), status: ts('claw-status', 'rps') };
    const cpuUs = { echo: ts('claw-echo', 'cpuUsPerReq'), bare: ts('bare', 'cpuUsPerReq'), status: ts('claw-status', 'cpuUsPerReq') };
    const echoRatio = t.echo.median / t.bare.median;
    const gatesUs = 1e6 / t.echo.median - 1e6 / t.status.median;
    const uncleanExits = [...Object.values(tput).flat(), ...exec].filter((r) => !r.cleanExit).length;

    const summary = {
      ...summaryHead(),
      loadavg: loadavg().map(r2),
      claw: relative(ROOT, CLAW) || CLAW,
      layers,
      echoThroughput: {
        requests: opt.requests,
        runs: opt.tputRuns,
        warmupLines: opt.tputWarmup,
        lineBytes: Math.round(lineBytes.echo),
        replyBytes: { claw: tput['claw-echo'][0].replyBytes, bare: tput.bare[0].replyBytes },
        rps: { clawEcho: Math.round(t.echo.median), bare: Math.round(t.bare.median), clawStatus: Math.round(t.status.median) },
        rpsP90: { clawEcho: Math.round(t.echo.p90), bare: Math.round(t.bare.p90), clawStatus: Math.round(t.status.p90) },
        cpuUsPerReq: { clawEcho: r2(cpuUs.echo.median), bare: r2(cpuUs.bare.median), clawStatus: r2(cpuUs.status.median) },
        ratio: r3(echoRatio),
        echoVsStatus: r3(t.echo.median / t.status.median),
        gatesUsPerCall: r2(gatesUs),
        cpuBoundUs: TARGETS.echoCpuUsPerCall,
        ok: cpuUs.echo.median <= TARGETS.echoCpuUsPerCall,
      },
      exec: exec.map((e) => ({
        variant: e.key,
        label: e.label,
        sandbox: e.sandbox,
        used: e.used,
        wrappers: e.wrappers,
        newNamespaces: e.newNamespaces,
        cgroup: e.cgroup,
        notes: e.notes,
        chain: e.chain,
        clawMs: rs(e.claw),
        bareMs: rs(e.bare),
        replayMs: rs(e.replay),
        deltaMs: r2(e.claw.median - e.bare.median),
        deltaP90Ms: r2(e.claw.p90 - e.bare.p90),
        wrappersMs: e.replay ? r2(e.replay.median - e.bare.median) : 0,
        clawOwnMs: r2(e.claw.median - (e.replay?.median ?? e.bare.median)),
        cpuMsPerCall: Object.fromEntries(Object.entries(e.cpu).map(([k, c]) => [k, { self: r2(c.self), children: r2(c.kids) }])),
        target: TARGETS.execDeltaMs,
        ok: e.claw.median - e.bare.median <= TARGETS.execDeltaMs,
      })),
      calls: opt.calls,
      warmup: opt.warmup,
      mcp: mcp ? { calls: mcp.calls, clawMs: rs(mcp.claw), bareMs: rs(mcp.bare), deltaMs: r2(mcp.claw.median - mcp.bare.median) } : null,
      uncleanExits,
    };

    if (!opt.json) {
      const ok = (b) => (b ? 'ok' : 'MISS');
      const rows1 = [
        ['metric', 'claw echo', 'bare', 'claw/bare', 'target', '', 'claw status'],
        [
          `req/s median (${opt.tputRuns} runs x ${opt.requests})`,
          int(t.echo.median),
          int(t.bare.median),
          `${f3(echoRatio)}x`,
          '',
          '',
          int(t.status.median),
        ],
        ['req/s p90', int(t.echo.p90), int(t.bare.p90), '', '', '', int(t.status.p90)],
        ['CPU us/request (child, median)', f2(cpuUs.echo.median), f2(cpuUs.bare.median), `${f2(cpuUs.echo.median / cpuUs.bare.median)}x`, `echo <= ${TARGETS.echoCpuUsPerCall} us`, ok(cpuUs.echo.median <= TARGETS.echoCpuUsPerCall), f2(cpuUs.status.median)],
        ['reply bytes', tput['claw-echo'][0].replyBytes, tput.bare[0].replyBytes, '', '', '', tput['claw-status'][0].replyBytes],
      ];
      const rows2 = [['variant', 'claw med', 'p90', 'bare med', 'p90', 'delta med', 'target', '', 'replay med', 'wrappers', 'claw own']];
      const rows2c = [['variant', 'claw self', 'claw kids', 'bare self', 'bare kids', 'replay self', 'replay kids']];
      for (const e of exec) {
        const d = e.claw.median - e.bare.median;
        rows2.push([
          `${e.key}: ${e.label}`,
          f2(e.claw.median),
          f2(e.claw.p90),
          f2(e.bare.median),
          f2(e.bare.p90),
          sgn(d),
          `<= +${TARGETS.execDeltaMs}`,
          ok(d <= TARGETS.execDeltaMs),
          e.replay ? f2(e.replay.median) : '-',
          e.replay ? sgn(e.replay.median - e.bare.median) : '-',
          sgn(e.claw.median - (e.replay?.median ?? e.bare.median)),
        ]);
        rows2c.push([
          `${e.key}: ${e.label}`,
          f2(e.cpu.claw.self),
          f2(e.cpu.claw.kids),
          f2(e.cpu.bare.self),
          f2(e.cpu.bare.kids),
          e.replay ? f2(e.cpu.replay.self) : '-',
          e.replay ? f2(e.cpu.replay.kids) : '-',
        ]);
      }
      let text =
        `claw-edge tool-call bench: ${relative(ROOT, CLAW)}; node ${process.version}, ${platform()}-${arch()}, ${cpus().length} CPUs, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n` +
        `isolation layers (claw doctor): ${layers.map((l) => `${l.name}=${l.available ? 'yes' : 'no'}`).join(', ')}\n\n` +
        `1. echo builtin through all gates vs scripts/bench/bare.mjs (same ${lineBytes.echo.toFixed(0)}-byte lines); claw.status on the same agent\n` +
        `   fresh process per run, ${opt.tputWarmup} warm-up lines answered first, then ${opt.requests} lines in one write, timed to the last reply\n` +
        `${table(rows1)}\n` +
        `gates + tool layer on top of the router: ${f2(gatesUs)} us/call wall (echo ${f2(1e6 / t.echo.median)} us vs status ${f2(1e6 / t.status.median)} us per request)\n\n` +
        `2. exec tool /bin/true, ms per sequential call (${opt.calls} calls after ${opt.warmup} warm-up, interleaved) vs bare spawn('/bin/true') over NDJSON\n` +
        `   replay = a second bare process spawning the wrapper chain claw used (probe); wrappers = replay - bare; claw own = claw - replay\n` +
        `${table(rows2)}\n\n` +
        `   CPU ms per call: the process itself (schedstat) / its reaped children, i.e. wrappers + tool (cutime+cstime, 10 ms ticks)\n` +
        `${table(rows2c)}\n`;
      for (const e of exec) {
        text += `   ${e.key}: ${e.used}\n`;
        if (e.chain) text += `      chain: ${e.chain.join(' ')}\n`;
        if (e.cgroup) {
          text += `      (the replay's sh only execs: the write to the run cgroup's cgroup.procs, a cgroup migration, is not replayed and counts in "claw own")\n`;
        }
      }
      if (mcp) {
        text +=
          `\n3. MCP echo (server-everything) round trip, ms per sequential call (${mcp.calls} calls after ${opt.warmup} warm-up, interleaved)\n` +
          `${table([
            ['', 'claw', 'bare proxy', 'delta'],
            ['median', f2(mcp.claw.median), f2(mcp.bare.median), sgn(mcp.claw.median - mcp.bare.median)],
            ['p90', f2(mcp.claw.p90), f2(mcp.bare.p90), sgn(mcp.claw.p90 - mcp.bare.p90)],
          ])}\n`;
      }
      if (uncleanExits > 0) text += `\nwarning: ${uncleanExits} child(ren) did not exit cleanly with code 0 after stdin EOF\n`;
      process.stdout.write(`${text}\n`);
    }
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    killAll();
    removeTmp();
  }
}

runMain('bench-tools', main, globalTimer);
