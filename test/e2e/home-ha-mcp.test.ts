// Home Assistant as the agent's hands (docs/home-assistant.md "HA as the agent's hands (MCP)"), through
// dist/claw.mjs against a stand-in for Home Assistant's `mcp_server` integration (test/helpers/fake-ha-mcp.ts:
// Streamable HTTP on /api/mcp, stateless, bearer long-lived access token). The token comes from a secret_ref
// in CLAW_SECRETS_DIR; the tools' descriptions and schemas from the server's tools/list; the policy lets the
// agent read the house freely (GetLiveContext) and puts every acting tool (HassTurnOn / HassTurnOff) behind an
// approval: approved → the lock really changes, denied → it does not; a wrong token stops the agent at
// STARTING with a message naming the server and never the token.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, manifest, type Agent } from './helpers/l2-agent.ts';
import { initParams, startClaw } from './helpers/claw-process.ts';
import { startFakeHaMcp } from '../helpers/fake-ha-mcp.ts';

const TOKEN = 'ha-long-lived-token-3c9e71b2f0a4';

const haTool = (name: string, haName: string, extra = '') => `    - inline:
        name: "${name}"
        mcp_source: { uri: "URI", tool_name: "${haName}" }
${extra}`;

const tools = [
  haTool('ha-live-context', 'GetLiveContext', '        annotations: { readOnlyHint: true }'),
  haTool('ha-turn-on', 'HassTurnOn'),
  haTool('ha-turn-off', 'HassTurnOff'),
].join('\n');

const policies = `    - inline:
        rules:
          - { id: "read-the-house", action: "allow", scope: "all", conditions: { tool: "ha-live-context" } }
          - id: "act-on-the-house"
            action: "require-approval"
            scope: "all"
            conditions: { tool: ["ha-turn-on", "ha-turn-off"] }
            reason: "acts on the house"
            approval: { timeout_seconds: 60, default_if_timeout: "deny" }`;

const sandbox = `      level: "process"
      capabilities:
        network: { mode: "allowlist", allowed_hosts: ["127.0.0.1"] }`;

function secretsDir(token: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'claw-ha-secrets-'));
  writeFileSync(join(dir, 'HA_TOKEN'), token);
  return dir;
}

const runtime = (url: string) => `mcp:
  start_retry_delays_ms: [100]
  servers:
    "${url}": { allow_loopback: true, bearer_secret_ref: HA_TOKEN }
`;

const parsed = (r: any) => JSON.parse(r.result.content[0].text);

test('HA over MCP: schema from tools/list, reads free, acts only when approved, token from CLAW_SECRETS_DIR', async () => {
  const ha = await startFakeHaMcp({ token: TOKEN });
  const secrets = secretsDir(TOKEN);
  let a: Agent | undefined;
  try {
    a = await agent(manifest({ tools: tools.replaceAll('URI', ha.url), policies, sandbox }), runtime(ha.url), undefined, ['env', `CLAW_SECRETS_DIR=${secrets}`]);
    // The server was asked for its tools at STARTING (no declared schema), with the token.
    assert.ok(ha.requests.some((r) => r.rpc === 'tools/list'));
    assert.ok(ha.requests.every((r) => r.authorization === `Bearer ${TOKEN}` && r.status! < 300), JSON.stringify(ha.requests));

    // Reading the house needs nobody's approval.
    const live = await a.call('ha-live-context', {}, 'ha-1');
    assert.match(parsed(live).result, /names: Front door\n  domain: lock\n  state: 'locked'/);
    assert.not.ok(a.claw.messages.some((m) => m.method === 'claw.tool.approval_requested'));

    // The schema is Home Assistant's: `domain` is a list, so a string is refused before anything is sent.
    const calls = ha.calls.length;
    const bad = await a.call('ha-turn-off', { name: 'Front door', domain: 'lock' }, 'ha-2');
    assert.is(bad.error.code, -32602);
    assert.is(ha.calls.length, calls);

    // Unlocking the front door waits for an approval; denied, the door stays locked.
    const denied = a.call('ha-turn-off', { name: 'Front door', domain: ['lock'] }, 'ha-3');
    const ask = await a.claw.waitFor((m) => m.method === 'claw.tool.approval_requested' && m.params.request_id === 'ha-3', 10_000);
    assert.is(ask.params.tool, 'ha-turn-off');
    assert.is(ask.params.rule_id, 'act-on-the-house');
    assert.equal(ask.params.arguments, { name: 'Front door', domain: ['lock'] });
    assert.is(ha.calls.length, calls, 'nothing reached Home Assistant while waiting');
    assert.equal((await a.claw.request('claw.tool.deny', { request_id: 'ha-3', reason: 'not now' })).result, { acknowledged: true });
    assert.is((await denied).error.code, -32013);
    assert.is(ha.state('lock.front_door'), 'locked');
    assert.is(ha.calls.length, calls);

    // Opening the garage, approved: Home Assistant is called once and the cover opens.
    const approved = a.call('ha-turn-on', { name: 'Garage door' }, 'ha-4');
    await a.claw.waitFor((m) => m.method === 'claw.tool.approval_requested' && m.params.request_id === 'ha-4', 10_000);
    assert.is(ha.state('cover.garage_door'), 'closed');
    assert.equal((await a.claw.request('claw.tool.approve', { request_id: 'ha-4' })).result, { acknowledged: true });
    const done = await approved;
    assert.equal(parsed(done).data.success, [{ name: 'Garage door', type: 'entity', id: 'cover.garage_door' }]);
    assert.is(ha.state('cover.garage_door'), 'open');
    assert.equal(ha.calls.at(-1), { tool: 'HassTurnOn', args: { name: 'Garage door' }, at: ha.calls.at(-1)!.at });

    // A target Home Assistant cannot match comes back as a failed tool result, not a protocol error.
    const nomatch = a.call('ha-turn-on', { name: 'Attic fan' }, 'ha-5');
    await a.claw.waitFor((m) => m.method === 'claw.tool.approval_requested' && m.params.request_id === 'ha-5', 10_000);
    await a.claw.request('claw.tool.approve', { request_id: 'ha-5' });
    const miss = await nomatch;
    assert.is(miss.result.isError, true);
    assert.match(miss.result.content[0].text, /MatchFailedError/);

    assert.not.ok(a.claw.stderr().includes(TOKEN), 'the token never reaches a log');
  } finally {
    await a?.close();
    if (a) rmSync(a.dir, { recursive: true, force: true });
    await ha.close();
    rmSync(secrets, { recursive: true, force: true });
  }
});

test('HA over MCP: a wrong long-lived token stops the agent at STARTING, naming the server, never the token', async () => {
  const ha = await startFakeHaMcp({ token: TOKEN });
  const wrong = 'ha-revoked-token-77d1e0aa9b';
  const secrets = secretsDir(wrong);
  const dir = mkdtempSync(join(tmpdir(), 'claw-ha-mcp-'));
  mkdirSync(join(dir, 'data'));
  writeFileSync(join(dir, 'claw.yaml'), manifest({ tools: tools.replaceAll('URI', ha.url), policies, sandbox }));
  writeFileSync(join(dir, 'claw.runtime.yaml'), `data_dir: ./data\n${runtime(ha.url)}`);
  const c = startClaw(['run', join(dir, 'claw.yaml')], { cwd: dir, env: { CLAW_SECRETS_DIR: secrets } });
  try {
    const init = await c.request('claw.initialize', initParams(), 'init');
    assert.ok(init.error, `initialize must fail: ${JSON.stringify(init)}`);
    const said = JSON.stringify(init.error) + c.stderr();
    assert.match(said, new RegExp(ha.url.replace(/[.]/g, '\\.')));
    assert.match(said, /refused our credentials \(HTTP 401 to initialize\); check mcp.servers in claw.runtime.yaml/);
    assert.not.ok(said.includes(wrong), 'the token is not in the error or the log');
    assert.ok(ha.requests.length > 0 && ha.requests.every((r) => r.status === 401));
    assert.is(ha.calls.length, 0);
  } finally {
    c.kill();
    await c.exited;
    await ha.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(secrets, { recursive: true, force: true });
  }
});

test.run();
