// What an A2A caller can reach and cost, against dist/claw.mjs (docs/a2a.md "Security"): a partner's client
// certificate opens the A2A routes but not the CKP endpoint (403) while an operator_cns certificate does; an
// oversize message (raw parts included) is invalid params on both bindings and creates no task; a path that leaves
// the A2A prefix once `..` is resolved is 404; a2a.path overlapping the CKP endpoint or holding `..`, and a token
// ref named `local`, refuse to start, naming what collides.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCerts } from './helpers/test-certs.ts';
import { request, rpc, startHttpClaw, type HttpClaw } from './helpers/http-claw.ts';
import { startClaw } from './helpers/claw-process.ts';
import { sleep } from './helpers/e2e-util.ts';
import { a2aManifest, agentsChannel } from './helpers/a2a-agent.ts';

// The A2A agent fixture of the other a2a-* suites, with the webhook Channel's allowlist given per test.
const manifest = (allowed: string[]) =>
  a2aManifest({
    name: 'a2a-limits',
    personality: 'You answer other agents.',
    channels: agentsChannel({ secretRef: 'UNUSED', access: `{ mode: "allowlist", allowed_ids: ${JSON.stringify(allowed)} }` }),
  });
const RULES = `rules:
  - match: "^hello"
    message: "Hello."
default:
  message: "No rule for that."
`;

async function start(config: string, allowed: string[], env: Record<string, string> = {}): Promise<HttpClaw> {
  const h = await startHttpClaw(config, { args: ['claw.yaml', '--start'], env, files: { 'claw.yaml': manifest(allowed), 'rules.yaml': RULES } });
  return h;
}

/** Waits for the session: the card answers 200 once it runs. */
async function ready(h: HttpClaw, tls: object = {}): Promise<void> {
  const card = h.url.replace(/\/ckp$/, '/.well-known/agent-card.json');
  const end = Date.now() + 15_000;
  while (h.c.child.exitCode === null && Date.now() < end) {
    const r = await request(card, { method: 'GET', tls }).catch(() => undefined);
    if (r?.status === 200) return;
    await sleep(50);
  }
  throw new Error(`the A2A card was never served: ${h.c.stderr().slice(-600)}`);
}

const send = (text: string | undefined, extra: Record<string, unknown>[] = []) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [...(text === undefined ? [] : [{ text }]), ...extra] } },
});

test('mTLS on a listener serving A2A: a partner\'s certificate gets 403 on the CKP endpoint and is the caller cn:<CN> on A2A; an operator_cns certificate reaches CKP', async () => {
  const certs = mkdtempSync(join(tmpdir(), 'claw-a2a-certs-'));
  try {
    makeCerts(certs, ['partner-agent', 'ops-console']);
    const ca = readFileSync(join(certs, 'ca.crt'));
    const as = (name: string) => ({ tls: { ca, cert: readFileSync(join(certs, `${name}.crt`)), key: readFileSync(join(certs, `${name}.key`)) } });
    const h = await start(
      `transports:
  - listen: https://127.0.0.1:0/ckp
    http:
      auth: { operator_cns: [ops-console] }
      tls: { cert_file: ${certs}/server.crt, key_file: ${certs}/server.key, client_ca_file: ${certs}/ca.crt }
a2a: { enabled: true }
`,
      ['cn:partner-agent'],
    );
    try {
      await ready(h, { ca });
      const status = { jsonrpc: '2.0', id: 1, method: 'claw.status' };
      const partnerCkp = await rpc(h.url, status, as('partner-agent'));
      assert.is(partnerCkp.status, 403, partnerCkp.text);
      assert.match(partnerCkp.json.error.message, /A2A caller/);
      const shutdown = await rpc(h.url, { jsonrpc: '2.0', id: 2, method: 'claw.shutdown' }, as('partner-agent'));
      assert.is(shutdown.status, 403);
      const a2a = h.url.replace(/\/ckp$/, '/a2a');
      const task = await rpc(a2a, send('hello'), { ...as('partner-agent'), headers: { 'a2a-version': '1.0' } });
      assert.is(task.status, 200, task.text);
      assert.is(task.json.result.task.status.state, 'TASK_STATE_COMPLETED', task.text);
      const ops = await rpc(h.url, status, as('ops-console'));
      assert.is(ops.status, 200, ops.text);
      assert.is(ops.json.result.state, 'READY');
      // The operator sees the partner's task under its certificate principal.
      const listed = await rpc(h.url, { jsonrpc: '2.0', id: 3, method: 'claw.task.list', params: {} }, as('ops-console'));
      assert.equal(listed.json.result.tasks.map((t: any) => t.caller), ['cn:partner-agent']);
    } finally {
      await h.stop();
    }
  } finally {
    rmSync(certs, { recursive: true, force: true });
  }
});

test('message cap (64 KiB by default, raw parts decoded and counted) on both bindings; `..` out of the A2A prefix is 404', async () => {
  const h = await start(
    `transports:
  - listen: http://127.0.0.1:0/ckp
    http: { auth: { bearer_token_refs: [OPERATOR], a2a_token_refs: [PARTNER_A] } }
a2a: { enabled: true }
`,
    ['PARTNER_A'],
    { OPERATOR: 'op-7a1f03c2', PARTNER_A: 'pa-5d1e0c99' },
  );
  try {
    await ready(h);
    const a2a = h.url.replace(/\/ckp$/, '/a2a');
    const headers = { authorization: 'Bearer pa-5d1e0c99', 'a2a-version': '1.0' };
    // 100,000 base64 characters are 75,000 bytes (+ the ids, the text and the media type): over 65,536, though the text the gate measures is short.
    const raw = { raw: 'A'.repeat(100_000), mediaType: 'application/octet-stream' };
    const over = await rpc(a2a, send('hello', [raw]), { headers });
    assert.is(over.status, 200);
    assert.is(over.json.error.code, -32602);
    assert.match(over.json.error.message, /message too large: 75065 bytes, all parts counted \(a2a\.max_message_bytes: 65536\)/);
    const rest = await request(`${a2a}/message:send`, { headers, body: JSON.stringify({ message: send(undefined, [{ text: 'x'.repeat(70_000) }]).params.message }) });
    assert.is(rest.status, 400);
    assert.is(rest.json.error.details[0].reason, 'INVALID_PARAMS');
    const list = await request(`${a2a}/tasks`, { method: 'GET', headers });
    assert.is(list.json.tasks.length, 0, 'an oversize message creates no task');
    // The listener routes the raw path (below /a2a/); what it resolves to is not an A2A path.
    for (const path of ['/a2a/%2e%2e/ckp', '/a2a/../a2b/tasks', '/a2a/%2E%2E/x/message:send']) {
      const r = await request(`${a2a}/tasks`, { method: 'GET', path, headers });
      assert.is(r.status, 404, path);
    }
    assert.is((await request(`${a2a}/tasks`, { method: 'GET', headers })).status, 200);
  } finally {
    await h.stop();
  }
});

test('refused at start, naming what collides: a2a.path on the CKP endpoint; a token ref named `local`; one token under two refs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-a2a-refuse-'));
  try {
    writeFileSync(join(dir, 'claw.yaml'), manifest([]));
    writeFileSync(join(dir, 'rules.yaml'), RULES);
    // Bounded: a configuration that is not refused would serve until killed.
    const run = async (config: string, env: Record<string, string> = {}) => {
      writeFileSync(join(dir, 'claw.runtime.yaml'), config);
      const c = startClaw(['run', join(dir, 'claw.yaml'), '--config', join(dir, 'claw.runtime.yaml')], { cwd: dir, env });
      const exit = await Promise.race([c.exited, sleep(15_000).then(() => undefined)]);
      if (!exit) {
        c.kill();
        await c.exited;
      }
      return { code: exit ? exit.code : null, stderr: c.stderr() };
    };
    const path = await run('transports:\n  - listen: http://127.0.0.1:0/ckp\na2a: { enabled: true, path: /ckp }\n');
    assert.is(path.code, 2, path.stderr);
    assert.match(path.stderr, /a2a\.path \\?"\/ckp\\?" collides with the CKP endpoint of http:\/\/127\.0\.0\.1:\d+\/ckp/);
    const dots = await run('a2a: { enabled: true, path: /a2a/../ckp }\n');
    assert.is(dots.code, 1, dots.stderr);
    assert.match(dots.stderr, /a2a\.path +must be an absolute path such as \/a2a, no empty, \. or \.\. segment/);
    const local = await run('transports:\n  - listen: http://127.0.0.1:0/ckp\n    http: { auth: { a2a_token_refs: [local] } }\na2a: { enabled: true }\n', { local: 'x' });
    assert.is(local.code, 2, local.stderr);
    assert.match(local.stderr, /token ref \\?"local\\?" is reserved/);
    // One secret under an operator's ref and a partner's would make the partner whichever matched first.
    const twin = await run('transports:\n  - listen: http://127.0.0.1:0/ckp\n    http: { auth: { bearer_token_refs: [OPS_TOKEN], a2a_token_refs: [PARTNER_TOKEN] } }\na2a: { enabled: true }\n', { OPS_TOKEN: 'same-secret-value-1234', PARTNER_TOKEN: 'same-secret-value-1234' });
    assert.is(twin.code, 2, twin.stderr);
    assert.match(twin.stderr, /secret_refs \\?"OPS_TOKEN\\?" and \\?"PARTNER_TOKEN\\?" hold the same token/);
    assert.not.ok(twin.stderr.includes('same-secret-value-1234'), 'the value never reaches the log');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
