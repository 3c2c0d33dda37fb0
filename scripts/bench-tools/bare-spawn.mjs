#!/usr/bin/env node
// Benchmark baseline for exec tools (scripts/bench-tools.mjs): the floor for "a Node process that
// answers one NDJSON JSON-RPC line by starting a program and waiting for it to exit".
// One line in → child_process.spawn() → 'exit' → one reply line out, written the plain way (utf8
// stream, split on "\n", JSON.parse, one process.stdout.write per reply), like scripts/bench/bare.mjs.
//
//   claw.initialize         → an initialize-shaped reply at once (nothing spawned)
//   bench.spawn {argv:[…]}  → spawn argv[0] with argv[1..] (the bench replays claw's sandbox chain
//                             with it, e.g. bwrap … -- prlimit … -- /bin/true); optional params.cwd
//   anything else           → spawn('/bin/true') (the floor the exec-tool latency is compared with)
// The reply carries the exit code. Arguments are ignored (the bench passes the same argv as to claw).
// Exits when stdin ends (a running child is left to finish on its own; /bin/true is gone in ~1 ms).
// The stdin loop and line handling are scripts/bench/ndjson-loop.mjs (shared with bare.mjs).
import { spawn } from 'node:child_process';
import { reply, fail, serveRequests } from '../bench/ndjson-loop.mjs';

serveRequests((msg) => {
  if (msg.method === 'claw.initialize') {
    reply(msg.id, { protocolVersion: '0.3.0', agentInfo: { name: 'bare-spawn', version: '0.0.0' }, conformanceLevel: 'level-2', capabilities: { tools: {} } });
    return;
  }
  const argv = msg.method === 'bench.spawn' && Array.isArray(msg.params?.argv) ? msg.params.argv : ['/bin/true'];
  const opts = msg.method === 'bench.spawn' && typeof msg.params?.cwd === 'string' ? { cwd: msg.params.cwd } : {};
  const child = spawn(argv[0], argv.slice(1), opts);
  child.once('error', (e) => fail(msg.id, `spawn ${argv[0]}: ${e.message}`));
  child.once('exit', (code, signal) => reply(msg.id, { content: [{ type: 'text', text: '' }], exitCode: code, signal }));
});
