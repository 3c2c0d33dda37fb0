#!/usr/bin/env node
// Benchmark baseline: the floor for "a Node process that speaks NDJSON JSON-RPC over stdio".
// Reads one JSON message per line on stdin, parses it, and answers each request with one
// minimal JSON-RPC reply line on stdout, of roughly the size claw sends for the same method.
// It is written the plain, idiomatic way (utf8 stream, split on "\n", JSON.parse, one
// process.stdout.write per reply, exactly like claw writes one frame per reply); it is neither
// slowed down nor micro-optimised. Arguments are ignored (the bench passes it the same argv as
// claw so both processes start identically). Exits when stdin ends.
// Self-contained on purpose: the cold-start floor must not read a second module at start-up, so
// it keeps its own copy of the NDJSON loop that scripts/bench/ndjson-loop.mjs shares elsewhere.

let buf = '';
let readyAt = 0;
let agentName = 'bare';

function reply(id, result) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`);
}

function handle(line) {
  if (line.endsWith('\r')) line = line.slice(0, -1);
  if (line.trim() === '') return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${e.message}` } })}\n`);
    return;
  }
  if (msg === null || typeof msg !== 'object' || msg.id === undefined) return; // notification / response: no reply
  if (msg.method === 'claw.initialize') {
    readyAt = Date.now();
    const name = msg.params?.manifest?.metadata?.name;
    if (typeof name === 'string') agentName = name;
    reply(msg.id, {
      protocolVersion: String(msg.params?.protocolVersion ?? '0.3.0'),
      agentInfo: { name: agentName, version: '0.0.0' },
      conformanceLevel: 'level-1',
      capabilities: {},
    });
    return;
  }
  reply(msg.id, { state: 'READY', uptime_ms: readyAt ? Date.now() - readyAt : 0 });
}

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buf += chunk;
  let start = 0;
  let nl;
  while ((nl = buf.indexOf('\n', start)) !== -1) {
    handle(buf.slice(start, nl));
    start = nl + 1;
  }
  buf = start === 0 ? buf : buf.slice(start);
});
process.stdin.on('end', () => {
  if (buf !== '') handle(buf);
  buf = '';
});
