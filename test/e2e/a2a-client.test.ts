// The A2A client from dist/claw.mjs: `claw a2a card` / `claw a2a send` against an agent built from the
// official SDK's server classes (1.0 and 0.3, polling and streaming, bearer auth, the SSRF guard), and one
// agent delegating to another: agent A's a2a-send tool call reaches agent B, a second `claw run` serving
// A2A (a2a.enabled), through A's gates (policy) and A's sandbox network rules.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runClaw } from './helpers/claw-process.ts';
import { a2aManifest, a2aRuntime, startA2aAgent } from './helpers/a2a-agent.ts';
import { agent, manifest } from './helpers/l2-agent.ts';
import { startSdkServer } from '../unit/a2a-client-sdk-server.ts';

const TOKEN = 'a2a-client-e2e-token-51c0ffee';

test('claw a2a card: the card printed, the interface named; without --allow-private the SSRF guard refuses before any request', async () => {
  const s = await startSdkServer({});
  try {
    const r = await runClaw(['a2a', 'card', s.url, '--allow-private']);
    assert.is(r.code, 0, r.stderr);
    assert.is(JSON.parse(r.stdout).name, 'sdk-echo');
    assert.match(r.stderr, new RegExp(`sdk-echo: JSON-RPC A2A 1\\.0 at ${s.url}/rpc`));
    const refused = await runClaw(['a2a', 'card', s.cardUrl]);
    assert.is(refused.code, 1);
    assert.match(refused.stderr, /127\.0\.0\.1 resolves to a blocked address 127\.0\.0\.1 \(loopback\)/);
    assert.is(s.seen.length, 1, 'only the first command reached the server');
  } finally {
    await s.close();
  }
});

test('claw a2a send: 1.0 polling with a token file, 0.3 streaming; exit 2 on usage', async () => {
  const dir = join(process.cwd(), '.build', `a2a-client-e2e-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  const a = await startSdkServer({ token: TOKEN });
  const b = await startSdkServer({ only03: true, streaming: true });
  try {
    const r = await runClaw(['a2a', 'send', a.url, 'hello there', '--token-file', tokenFile, '--allow-private', '--timeout', '20']);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout, 'echo: hello there\n');
    assert.ok(a.seen.some((x) => x.body?.method === 'GetTask' && x.headers.authorization === `Bearer ${TOKEN}`));
    assert.not.ok(r.stderr.includes(TOKEN));
    const noToken = await runClaw(['a2a', 'send', a.url, 'hi', '--allow-private']);
    assert.is(noToken.code, 1);
    assert.match(noToken.stderr, /HTTP 401/);

    const s = await runClaw(['a2a', 'send', b.cardUrl, 'streamed', '--allow-private', '--json']);
    assert.is(s.code, 0, s.stderr);
    const out = JSON.parse(s.stdout);
    assert.is(out.text, 'echo: streamed');
    assert.equal(out.endpoint, { url: `${b.url}/rpc`, version: '0.3' });
    assert.equal(b.seen.filter((x) => x.method === 'POST').map((x) => x.body?.method), ['message/stream']);

    assert.is((await runClaw(['a2a', 'send', a.url])).code, 2);
  } finally {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const B_MANIFEST = a2aManifest({ name: 'board-b', personality: 'You answer for board B.' });
const B_RULES = `rules:
  - match: "^temperature"
    flags: i
    message: "Board B reads 21.5 C."
default:
  message: "Board B has no rule for that."
`;

const sendTool = (name: string) => `    - inline:
        name: "${name}"
        description: "Ask a remote A2A agent"
        input_schema:
          type: "object"
          properties: { peer: { type: "string" }, text: { type: "string" } }
          required: ["peer", "text"]`;

test('delegation: agent A asks agent B (claw run, a2a.enabled) through its a2a-send tool; policy and the network rules gate it', async () => {
  const b = await startA2aAgent({ manifest: B_MANIFEST, rules: B_RULES, config: a2aRuntime(), env: { A2A_TOKEN: TOKEN } });
  const sdk = await startSdkServer({});
  let a: Awaited<ReturnType<typeof agent>> | undefined;
  try {
    const base = b.base;
    const port = new URL(sdk.url).port;
    a = await agent(
      manifest({
        tools: [sendTool('a2a-send'), sendTool('ask-forbidden')].join('\n'),
        sandbox: `      level: "none"
      capabilities:
        network: { mode: "allowlist", allowed_hosts: ["127.0.0.1"] }`,
        policies: `    - inline:
        rules:
          - { id: "no-forbidden", action: "deny", scope: "all", conditions: { tool: "ask-forbidden" } }
          - { id: "allow-all", action: "allow", scope: "all" }`,
      }),
      `secrets: { dir: ./secrets }
tools:
  ask-forbidden: { builtin: a2a-send }
a2a:
  peers:
    - { name: board-b, card_url: "${base}", auth: { secret_ref: B_TOKEN }, allow_loopback: true, timeout_ms: 20000 }
    - { name: sdk-by-name, card_url: "http://localhost:${port}", allow_loopback: true }
    - { name: sdk-no-loopback, card_url: "${sdk.url}" }
`,
      (dir) => {
        mkdirSync(join(dir, 'secrets'));
        writeFileSync(join(dir, 'secrets', 'B_TOKEN'), TOKEN);
      },
    );
    const ok = await a.call('a2a-send', { peer: 'board-b', text: 'temperature please' }, 'a2a-1');
    assert.ok(ok.result, JSON.stringify(ok.error));
    assert.not.ok(ok.result.isError);
    assert.is(ok.result.content[0].text, 'Board B reads 21.5 C.');
    assert.match(ok.result.content[1].text, /\[a2a peer=board-b agent=board-b state=completed context_id=\S+ task_id=\S+\]/);

    // The sandbox allowlist names 127.0.0.1, not localhost: refused (-32010) before any request.
    const unlisted = await a.call('a2a-send', { peer: 'sdk-by-name', text: 'x' }, 'a2a-2');
    assert.is(unlisted.error?.code, -32010);
    assert.match(JSON.stringify(unlisted.error), /localhost is not in the sandbox allowlist/);
    // A loopback peer without allow_loopback: the SSRF guard refuses.
    const ssrf = await a.call('a2a-send', { peer: 'sdk-no-loopback', text: 'x' }, 'a2a-3');
    assert.is(ssrf.error?.code, -32010);
    assert.match(JSON.stringify(ssrf.error), /blocked address/);
    // Policy: a tool bound to a2a-send that the policy denies never sends.
    const denied = await a.call('ask-forbidden', { peer: 'sdk-by-name', text: 'x' }, 'a2a-4');
    assert.is(denied.error?.code, -32011);
    assert.is(sdk.seen.length, 0, 'no refused call reached the peer');
    assert.not.ok(a.claw.stderr().includes(TOKEN), 'the token is never logged');
  } finally {
    await a?.close();
    await sdk.close();
    await b.stop();
  }
});

test.run();
