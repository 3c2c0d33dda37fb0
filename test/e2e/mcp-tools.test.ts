// An MCP server from npm (@modelcontextprotocol/server-everything) driven through a manifest's
// mcp_source (spec §5.4): description and input schema from tools/list, calls proxied through the
// same gates (schema, policy, timeout), the server under the tool's sandbox.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { ROOT } from './helpers/claw-process.ts';
import { agent, manifest } from './helpers/l2-agent.ts';

const SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const uri = `stdio://${process.execPath}?arg=${encodeURIComponent(SERVER)}&arg=stdio`;

const mcpTool = (name: string, toolName: string, extra = '') => `    - inline:
        name: "${name}"
        mcp_source:
          uri: "${uri}"
          tool_name: "${toolName}"
${extra}`;

const tools = [
  mcpTool('mcp-echo', 'echo'),
  mcpTool('mcp-sum', 'get-sum'),
  mcpTool('mcp-long', 'trigger-long-running-operation', '        timeout_ms: 700'),
].join('\n');

const policies = `    - inline:
        rules:
          - { id: "no-sums", action: "deny", scope: "all", conditions: { tool: "mcp-sum" } }
          - { id: "allow-all", action: "allow", scope: "all" }`;

const sandbox = '      level: "process"\n      capabilities:\n        filesystem: { mode: "read-only" }\n        network: { mode: "deny" }';

test('MCP tools through mcp_source: schema from tools/list, result, policy and timeout through the gates', async () => {
  const a = await agent(manifest({ tools, policies, sandbox }), 'sandbox:\n  kill_grace_ms: 300\n');
  try {
    const r = await a.call('mcp-echo', { message: 'over MCP' }, 'm-1');
    assert.equal(r.result, { content: [{ type: 'text', text: 'Echo: over MCP' }] });
    // The input schema came from the server's tools/list: `message` is required there.
    const bad = await a.call('mcp-echo', { text: 'wrong field' }, 'm-2');
    assert.is(bad.error.code, -32602);
    assert.ok(bad.error.data.issues.some((i: any) => i.keyword === 'required'), JSON.stringify(bad.error.data));
    const denied = await a.call('mcp-sum', { a: 1, b: 2 }, 'm-3');
    assert.is(denied.error.code, -32011);
    assert.is(denied.error.data.rule_id, 'no-sums');
    const t0 = Date.now();
    const slow = await a.call('mcp-long', { duration: 30, steps: 3 }, 'm-4');
    assert.is(slow.error.code, -32014);
    assert.ok(Date.now() - t0 < 5000, `timeout answered after ${Date.now() - t0} ms`);
    // The server was killed on timeout; the next call starts it again transparently.
    const again = await a.call('mcp-echo', { message: 'after restart' }, 'm-5');
    assert.equal(again.result, { content: [{ type: 'text', text: 'Echo: after restart' }] });
  } finally {
    await a.close();
  }
});

test.run();
