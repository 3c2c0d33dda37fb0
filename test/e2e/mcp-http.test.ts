// MCP servers over Streamable HTTP through dist/claw.mjs (spec §5.4: mcp_source `https://`, and
// loopback http:// when claw.runtime.yaml allows it): server-everything in streamableHttp mode behind
// a proxy that demands a bearer token (from a secret_ref), schema from tools/list, the gates, the
// timeout, a restart of the server mid-session, the network guard, and a server that is down at start.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agent, manifest } from './helpers/l2-agent.ts';
import { freePort, startEverythingHttp, startProxy } from '../fixtures/mcp/http-server.ts';

const TOKEN = 'mcp-e2e-token-5f2a9c7d31';

const tool = (name: string, uri: string, toolName: string, extra = '') => `    - inline:
        name: "${name}"
        mcp_source:
          uri: "${uri}"
          tool_name: "${toolName}"
${extra}`;

const declared = `        description: "declared"
        input_schema: { type: "object" }`;

test('MCP over HTTP: bearer auth, schema from tools/list, gates, timeout, restart, network guard, server down at start', async () => {
  const server = await startEverythingHttp();
  const proxy = await startProxy(server.port, { token: TOKEN });
  const downUrl = `http://127.0.0.1:${await freePort()}/mcp`;
  const tools = [
    tool('mcp-echo', proxy.url, 'echo'),
    tool('mcp-long', proxy.url, 'trigger-long-running-operation', '        timeout_ms: 700'),
    tool('mcp-far', 'https://mcp.example.com/mcp', 'echo', declared),
    tool('mcp-down', downUrl, 'echo'),
  ].join('\n');
  const sandbox = '      level: "process"\n      capabilities:\n        network: { mode: "allowlist", allowed_hosts: ["127.0.0.1"] }';
  const runtime = `secrets: { dir: ./secrets }
mcp:
  start_retry_delays_ms: [100, 200]
  servers:
    "${proxy.url}": { allow_loopback: true, bearer_secret_ref: MCP_TOKEN }
    "${downUrl}": { allow_loopback: true }
`;
  let a: Awaited<ReturnType<typeof agent>> | undefined;
  try {
    a = await agent(manifest({ tools, sandbox }), runtime, (dir) => {
      mkdirSync(join(dir, 'secrets'));
      writeFileSync(join(dir, 'secrets', 'MCP_TOKEN'), TOKEN);
    });
    const r = await a.call('mcp-echo', { message: 'over HTTP' }, 'h-1');
    assert.equal(r.result, { content: [{ type: 'text', text: 'Echo: over HTTP' }] });
    assert.ok(proxy.requests.length > 0 && proxy.requests.every((q) => q.headers.authorization === `Bearer ${TOKEN}`));
    // The input schema came from the server's tools/list at STARTING: `message` is required there.
    const bad = await a.call('mcp-echo', { text: 'wrong field' }, 'h-2');
    assert.is(bad.error.code, -32602);
    const t0 = Date.now();
    const slow = await a.call('mcp-long', { duration: 30, steps: 3 }, 'h-3');
    assert.is(slow.error.code, -32014);
    assert.ok(Date.now() - t0 < 5000, `timeout answered after ${Date.now() - t0} ms`);
    for (let i = 0; i < 100 && !proxy.messages().some((m) => m.method === 'notifications/cancelled'); i++) await new Promise((res) => setTimeout(res, 20));
    const call = proxy.messages().find((m) => m.method === 'tools/call' && m.params.name === 'trigger-long-running-operation');
    assert.ok(proxy.messages().some((m) => m.method === 'notifications/cancelled' && m.params.requestId === call.id), 'the server was told to cancel');
    // The server restarts and forgets every session: the next call initializes a new one.
    await server.restart();
    const again = await a.call('mcp-echo', { message: 'after restart' }, 'h-4');
    assert.equal(again.result, { content: [{ type: 'text', text: 'Echo: after restart' }] });
    assert.is(proxy.messages().filter((m) => m.method === 'initialize').length, 2);
    // Not in the sandbox's allowlist: refused by the network guard, nothing sent.
    const before = proxy.requests.length;
    const far = await a.call('mcp-far', { message: 'x' }, 'h-5');
    assert.is(far.error.code, -32010);
    assert.match(far.error.message + JSON.stringify(far.error.data), /mcp\.example\.com/);
    assert.is(proxy.requests.length, before);
    // Down at start: the agent started anyway; the tool answers -32020 naming the server.
    const down = await a.call('mcp-down', { message: 'x' }, 'h-6');
    assert.is(down.error.code, -32020);
    assert.match(down.error.message, new RegExp(downUrl.replace(/[.]/g, '\\.')));
    const logs = a.claw.stderr();
    assert.match(logs, /mcp server unreachable at start/);
    assert.not.ok(logs.includes(TOKEN), 'the token never reaches a log');
    assert.not.ok(JSON.stringify([r, bad, slow, again, far, down]).includes(TOKEN));
  } finally {
    await a?.close();
    await proxy.close();
    await server.stop();
  }
});

test.run();
