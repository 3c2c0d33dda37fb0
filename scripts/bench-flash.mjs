#!/usr/bin/env node
// Flash wear of a Level 3 agent (BENCH.md "Flash wear"): bytes it writes to storage
//   1. at start-up (spawn → initialize answered, MQTT connected, memory opened by one query),
//   2. idle: a window of real time with the heartbeat and the MQTT keep-alive shortened (heartbeat 1 s instead of
//      15 s, keep-alive 1 s instead of 30 s), so the window holds as many of each as 10+ minutes at the defaults;
//      the agent is connected to a real broker (Debian's mosquitto on loopback) and listens on stdio,
//   3. per agent turn with conversation memory: what the agent loop stores per turn — the user's message and the
//      answer, one claw.memory.store call each into the `conversation` store (src/agent/history.ts) — N turns.
// Counted two ways: write_bytes of /proc/<pid>/io (bytes the process made the kernel send to the block device:
// the flash), and, when strace is there, every write/pwrite/writev/fsync/fdatasync/rename/unlink syscall on a
// file (not a pipe or socket), with its bytes — which also shows *what* was written.
// The agent is scripts/bench/level3/claw.yaml, in a temp directory on the same file system as the repository's.
// Usage: node scripts/bench-flash.mjs [--idle-s=40] [--turns=20] [--node=PATH] [--json]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { createRequire } from 'node:module';
import { ROOT, DEFAULT_CLAW, runtime, parseArgs, guardChildren, runMain, killAll, sleep, waitForTcp, Proc, awaitReply, initializeLine, live, extraPids, descendants, table, int } from './bench/lib.mjs';
import { copyAgent } from './bench/level3.mjs';

const { flags, values, num } = parseArgs(process.argv.slice(2), {
  name: 'bench-flash',
  usage: 'usage: node scripts/bench-flash.mjs [--idle-s=40] [--turns=20] [--node=PATH] [--json]\n',
  defaults: { json: false },
  flags: { '--json': ['json', true] },
  valueNames: ['idle-s', 'turns', 'node'],
});
const IDLE_S = num('idle-s', 40);
const TURNS = num('turns', 20);
if (values.node) runtime.exec = values.node;
const progress = (s) => process.stderr.write(`bench-flash: ${s}\n`);
// tree: the agent runs under strace, so its process is a grandchild; it is killed with the rest.
const globalTimer = guardChildren({ name: 'bench-flash', timeoutS: IDLE_S + 180, tree: true });

const MOSQUITTO = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto'].find((p) => existsSync(p));
const STRACE = ['/usr/bin/strace', '/bin/strace'].find((p) => existsSync(p));

function ioOf(pid) {
  const t = readFileSync(`/proc/${pid}/io`, 'utf8');
  return { writeBytes: Number(/write_bytes:\s+(\d+)/.exec(t)[1]), wchar: Number(/wchar:\s+(\d+)/.exec(t)[1]) };
}

/** strace lines since `from` (byte offset): file writes and syncs (fd shown as <path> with -y), bytes by kind. */
function straceSummary(file, from) {
  const text = existsSync(file) ? readFileSync(file, 'utf8').slice(from) : '';
  const out = { writes: 0, bytes: 0, syncs: 0, renames: 0, unlinks: 0, files: new Map() };
  for (const line of text.split('\n')) {
    const m = /(write|pwrite64|writev|pwritev|pwritev2)\((\d+)<([^>]*)>.*\)\s+=\s+(\d+)/.exec(line);
    if (m) {
      if (!m[3].startsWith('/') || m[3].startsWith('/dev/')) continue; // pipes, sockets, ttys
      out.writes++;
      out.bytes += Number(m[4]);
      const name = m[3].replace(/^.*\//, '');
      out.files.set(name, (out.files.get(name) ?? 0) + Number(m[4]));
      continue;
    }
    if (/(fsync|fdatasync)\(\d+<\//.test(line)) out.syncs++;
    else if (/rename(at2?)?\(/.test(line) && /= 0/.test(line)) out.renames++;
    else if (/unlink(at)?\(/.test(line) && /= 0/.test(line)) out.unlinks++;
  }
  return { ...out, files: Object.fromEntries(out.files) };
}

async function freePort() {
  return new Promise((r) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => r(p));
    });
  });
}

async function main() {
  if (!MOSQUITTO) throw new Error('mosquitto not found (bash scripts/test-deps.sh installs it)');
  const work = mkdtempSync(join(ROOT, '.build', 'bench-flash-'));
  try {
    const port = await freePort();
    writeFileSync(join(work, 'mosquitto.conf'), [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'persistence false', ...(process.getuid?.() === 0 ? ['user root'] : []), ''].join('\n'));
    const broker = spawn(MOSQUITTO, ['-c', join(work, 'mosquitto.conf')], { stdio: 'ignore' });
    live.add(broker);
    await waitForTcp(port, 'mosquitto');

    const agentDir = join(work, 'agent');
    const manifestFile = copyAgent(join(ROOT, 'scripts', 'bench', 'level3', 'claw.yaml'), agentDir);
    // The shortened intervals (see the top of this file); everything else as the bench agent ships.
    appendFileSync(
      join(agentDir, 'claw.runtime.yaml'),
      `heartbeat: { interval_ms: 1000 }\ntransports:\n  - listen: mqtt://127.0.0.1:${port}/bench/home\n    mqtt: { keepalive_s: 1 }\n`,
    );
    const yaml = createRequire(join(ROOT, 'package.json'))('yaml');
    const manifest = yaml.parse(readFileSync(manifestFile, 'utf8'));
    const trace = join(work, 'strace.txt');
    const nodeArgs = [DEFAULT_CLAW, 'run', manifestFile];
    const env = { ...process.env, CLAW_CACHE_DIR: join(work, 'cache') };
    // A first start fills the code and probe caches (they are written once per installation, not per start).
    {
      const warm = new Proc('warm', nodeArgs, { cwd: agentDir, env });
      warm.write(initializeLine('bench-flash', manifest));
      await awaitReply(warm, 1, 60000);
      await warm.call(`${JSON.stringify({ jsonrpc: '2.0', id: 'q', method: 'claw.memory.query', params: { store: 'conversation', query: { type: 'time-range', time_range: {} } } })}\n`, 'q', 60000);
      await sleep(6000); // the code cache is written 5 s after compiling (docs/startup.md)
      await warm.stop();
    }
    rmSync(join(agentDir, '.claw-data'), { recursive: true, force: true });

    // Under strace when there is one: the node process is strace's child.
    const realExec = runtime.exec;
    let p;
    if (STRACE) {
      runtime.exec = STRACE;
      p = new Proc('claw', ['-f', '-y', '-qq', '-e', 'trace=write,pwrite64,writev,pwritev,pwritev2,fsync,fdatasync,rename,renameat,renameat2,unlink,unlinkat', '-o', trace, realExec, ...nodeArgs], { cwd: agentDir, env });
      runtime.exec = realExec;
    } else p = new Proc('claw', nodeArgs, { cwd: agentDir, env });
    const t0 = Date.now();
    p.write(initializeLine('bench-flash', manifest));
    await awaitReply(p, 1, 60000);
    const pid = STRACE ? await (async () => {
      for (let i = 0; i < 100; i++) {
        const kids = descendants(p.pid);
        if (kids.length > 0) return kids[0];
        await sleep(20);
      }
      throw new Error('no node process under strace');
    })() : p.pid;
    extraPids.add(pid);
    for (let i = 0; !p.logLines().some((l) => l.msg === 'mqtt connected'); i++) {
      if (i > 500) throw new Error('the agent did not connect to mosquitto');
      await sleep(20);
    }
    // Open the memory as an agent that has used it once (the database opens on first need).
    await p.call(`${JSON.stringify({ jsonrpc: '2.0', id: 'open', method: 'claw.memory.query', params: { store: 'conversation', query: { type: 'time-range', time_range: {} } } })}\n`, 'open', 60000);
    await sleep(500);
    const afterStart = ioOf(pid);
    const traceAtStart = existsSync(trace) ? readFileSync(trace, 'utf8').length : 0;
    const startSys = STRACE ? straceSummary(trace, 0) : undefined;

    progress(`idle for ${IDLE_S} s (heartbeat every 1 s, MQTT keep-alive 1 s)`);
    await sleep(IDLE_S * 1000);
    p.takeLines();
    const afterIdle = ioOf(pid);
    const traceAtIdle = existsSync(trace) ? readFileSync(trace, 'utf8').length : 0;
    const idleSys = STRACE ? straceSummary(trace, traceAtStart) : undefined;
    const beats = IDLE_S; // one per second

    progress(`${TURNS} turns: user message + answer stored in the conversation store`);
    for (let t = 0; t < TURNS; t++) {
      for (const [role, content] of [
        ['user', `turn ${t}: is the kitchen light still on?`],
        ['assistant', `Turn ${t}: the kitchen light is off; the hallway lamp has been on since 18:02. Shall I switch it off?`],
      ]) {
        const id = `t${t}${role[0]}`;
        const r = await p.call(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'claw.memory.store', params: { store: 'conversation', entries: [{ content, metadata: { role } }], context: { request_id: `turn-${t}-${role}` } } })}\n`, id, 60000);
        if (!r.msg.result) throw new Error(`store failed: ${JSON.stringify(r.msg)}`);
      }
    }
    await sleep(500);
    const afterTurns = ioOf(pid);
    const turnSys = STRACE ? straceSummary(trace, traceAtIdle) : undefined;
    await p.stop();

    const payloadPerTurn = Buffer.byteLength('turn 10: is the kitchen light still on?') + Buffer.byteLength('Turn 10: the kitchen light is off; the hallway lamp has been on since 18:02. Shall I switch it off?');
    const res = {
      load: loadavg().map((l) => l.toFixed(2)).join(' '),
      strace: Boolean(STRACE),
      startupMs: Date.now() - t0,
      start: { writeBytes: afterStart.writeBytes, syscalls: startSys },
      idle: { seconds: IDLE_S, heartbeats: beats, keepalives: IDLE_S, writeBytes: afterIdle.writeBytes - afterStart.writeBytes, syscalls: idleSys },
      turns: { n: TURNS, writeBytes: afterTurns.writeBytes - afterIdle.writeBytes, perTurn: (afterTurns.writeBytes - afterIdle.writeBytes) / TURNS, payloadPerTurn, syscalls: turnSys },
    };
    if (!flags.json) {
      const sys = (s) => (s ? `${int(s.writes)} writes, ${int(s.bytes)} B, ${s.syncs} syncs, ${s.renames} renames` : 'n/a (no strace)');
      const rows = [
        ['phase', 'write_bytes (to the device)', 'file syscalls (strace)'],
        ['start-up (initialize, MQTT connect, memory opened)', int(res.start.writeBytes), sys(startSys)],
        [`idle ${IDLE_S} s: ${beats} heartbeats, ${IDLE_S} keep-alives (= ${Math.round((beats * 15) / 60)} min of heartbeats at 15 s)`, int(res.idle.writeBytes), sys(idleSys)],
        [`${TURNS} turns (2 conversation entries each)`, int(res.turns.writeBytes), sys(turnSys)],
        ['per turn', int(res.turns.perTurn), turnSys ? `${int(turnSys.bytes / TURNS)} B in ${(turnSys.writes / TURNS).toFixed(1)} writes, ${(turnSys.syncs / TURNS).toFixed(1)} syncs; payload ${payloadPerTurn} B` : ''],
      ];
      process.stdout.write(`claw-edge flash bench: ${realExec}; load average ${res.load}\n\n${table(rows)}\n\n`);
      if (turnSys) process.stdout.write(`files written during the turns: ${JSON.stringify(turnSys.files)}\n`);
      if (idleSys) process.stdout.write(`files written while idle: ${JSON.stringify(idleSys.files)}\n`);
      if (startSys) process.stdout.write(`files written at start-up: ${JSON.stringify(startSys.files)}\n\n`);
    }
    process.stdout.write(`${JSON.stringify(res)}\n`);
  } finally {
    killAll();
    rmSync(work, { recursive: true, force: true });
  }
}
runMain('bench-flash', main, globalTimer);
