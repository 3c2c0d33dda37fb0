#!/usr/bin/env node
// Benchmark baseline for MCP tools (scripts/bench-tools.mjs): the floor for "a Node process that
// forwards one NDJSON JSON-RPC request to a stdio MCP server and answers with its result".
//
//   claw.initialize → the first manifest tool with an `mcp_source` (stdio://<command>?arg=…&arg=…,
//                     as claw reads it): spawn it, MCP initialize + notifications/initialized, then
//                     reply (result.serverPid: the bench kills it should anything go wrong)
//   claw.tool.call  → tools/call { name: that tool's mcp_source.tool_name, arguments } → reply with
//                     the server's result (one request at a time is all the bench sends)
// Arguments are ignored (the bench passes the same argv as to claw).
// Plain and idiomatic, like scripts/bench/bare.mjs: split on "\n", JSON.parse, one write per message.
// Exits when stdin ends, after closing the server's stdin (and SIGTERM if it lingers).
// reply/fail and the line loop (eachLine) are scripts/bench/ndjson-loop.mjs.
import { spawn } from 'node:child_process';
import { reply, fail, eachLine } from '../bench/ndjson-loop.mjs';

let server;
let toolName = 'echo';
let nextId = 1;
const pending = new Map();

function toServer(method, params) {
  const id = nextId++;
  server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

function startServer(manifest) {
  const tool = (manifest?.spec?.tools ?? []).map((t) => t.inline).find((t) => t?.mcp_source);
  if (!tool) throw new Error('no tool with an mcp_source in the manifest');
  const uri = new URL(tool.mcp_source.uri);
  if (uri.protocol !== 'stdio:') throw new Error(`unsupported MCP uri ${tool.mcp_source.uri}`);
  toolName = tool.mcp_source.tool_name ?? tool.name;
  const command = decodeURIComponent(uri.pathname);
  server = spawn(command, uri.searchParams.getAll('arg'), { stdio: ['pipe', 'pipe', 'ignore'] });
  eachLine(server.stdout, (line) => {
    let m;
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    const p = m.id !== undefined ? pending.get(m.id) : undefined;
    if (!p) return; // notifications, server→client requests: not used by echo
    pending.delete(m.id);
    if (m.error) p.reject(new Error(m.error.message ?? 'MCP error'));
    else p.resolve(m.result);
  });
  server.once('exit', () => {
    for (const p of pending.values()) p.reject(new Error('MCP server exited'));
    pending.clear();
  });
}

async function handle(msg) {
  if (msg.method === 'claw.initialize') {
    startServer(msg.params?.manifest);
    await toServer('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bare-mcp', version: '0.0.0' } });
    server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    reply(msg.id, { protocolVersion: '0.3.0', agentInfo: { name: 'bare-mcp', version: '0.0.0' }, conformanceLevel: 'level-2', capabilities: { tools: {} }, serverPid: server.pid });
    return;
  }
  reply(msg.id, await toServer('tools/call', { name: toolName, arguments: msg.params?.arguments ?? {} }));
}

eachLine(process.stdin, (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    fail(null, `Parse error: ${e.message}`);
    return;
  }
  if (msg && typeof msg === 'object' && msg.id !== undefined) handle(msg).catch((e) => fail(msg.id, e.message));
});
process.stdin.on('end', () => {
  if (!server || server.exitCode !== null || server.signalCode !== null) return;
  server.stdin.end();
  const t = setTimeout(() => server.kill('SIGTERM'), 1000);
  server.once('exit', () => clearTimeout(t));
});
