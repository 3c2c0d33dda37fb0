// The a2a-send builtin over the runtime's peer port (src/runtime/a2a-peers.ts) against an agent built from
// the SDK's server classes, and the `a2a.peers` schema of claw.runtime.yaml. The tool's sandbox network
// rules decide whether a peer may be reached at all: a refusal is a sandbox violation and no request leaves.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { a2aSend } from '../../src/tools/builtins/a2a-send.ts';
import { BUILTINS } from '../../src/tools/builtins/index.ts';
import { SandboxViolation } from '../../src/tools/types.ts';
import { a2aPeerPort } from '../../src/runtime/a2a-peers.ts';
import { runtimeConfigSchema } from '../../src/config/runtime-config.ts';
import type { A2aPeerConfig } from '../../src/a2a/client/config.ts';
import type { BuiltinContext } from '../../src/tools/builtins/def.ts';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';
import { startSdkServer, type SdkServer } from './a2a-client-sdk-server.ts';

const TOKEN = 'peer-token-4b1d9e7a';
let server: SdkServer;

const secrets = { resolve: async (ref: string) => (ref === 'PEER_TOKEN' ? TOKEN : Promise.reject(new Error(`no ${ref}`))) };
const ALLOW_LOCAL: SandboxSpec = { level: 'none', capabilities: { network: { mode: 'allowlist', allowed_hosts: ['127.0.0.1'] } } } as SandboxSpec;

function ctx(sandbox: SandboxSpec, peers: A2aPeerConfig[] | undefined, signal = new AbortController().signal): BuiltinContext {
  return {
    signal,
    sandbox,
    cwd: '/',
    run: async () => assert.unreachable('no process') as never,
    fetch: async () => assert.unreachable('no http-fetch') as never,
    ...(peers ? { a2a: a2aPeerPort(peers, { secrets }) } : {}),
  };
}
const peer = (o: Partial<A2aPeerConfig> = {}): A2aPeerConfig => ({ name: 'echo', card_url: server.url, auth: { secret_ref: 'PEER_TOKEN' }, allow_loopback: true, ...o });

async function violation(p: Promise<unknown>): Promise<SandboxViolation> {
  try {
    await p;
  } catch (e) {
    assert.instance(e, SandboxViolation);
    return e as SandboxViolation;
  }
  return assert.unreachable('expected a sandbox violation') as never;
}

test.before(async () => {
  server = await startSdkServer({ token: TOKEN, delayMs: 50 });
});
test.after(() => server.close());
test.before.each(() => {
  server.seen.length = 0;
});

test('a2a-send is a builtin; it sends the text to the peer with its bearer token and returns the reply', async () => {
  assert.is(BUILTINS['a2a-send'], a2aSend);
  const r = await a2aSend.run({ peer: 'echo', text: 'status?' }, ctx(ALLOW_LOCAL, [peer()]));
  assert.not.ok(r.isError);
  assert.is(r.content[0].type === 'text' && r.content[0].text, 'echo: status?');
  assert.match((r.content[1] as { text: string }).text, /\[a2a peer=echo agent=sdk-echo state=completed context_id=\S+ task_id=\S+\]/);
  const posts = server.seen.filter((x) => x.method === 'POST');
  assert.ok(posts.length >= 1 && posts.every((x) => x.headers.authorization === `Bearer ${TOKEN}`));
});

test('a peer host outside the sandbox allowlist is refused before any request', async () => {
  const sb = { level: 'none', capabilities: { network: { mode: 'allowlist', allowed_hosts: ['agents.example'] } } } as SandboxSpec;
  const e = await violation(Promise.resolve(a2aSend.run({ peer: 'echo', text: 'x' }, ctx(sb, [peer()]))));
  assert.is(e.rule, 'network.host-not-allowed');
  assert.match(e.message, /a2a-send to echo: host 127\.0\.0\.1 is not in the sandbox allowlist/);
  assert.is(server.seen.length, 0);
});

test('a loopback peer without allow_loopback is refused by the SSRF guard; network deny refuses outright', async () => {
  const e = await violation(Promise.resolve(a2aSend.run({ peer: 'echo', text: 'x' }, ctx(ALLOW_LOCAL, [peer({ allow_loopback: false })]))));
  assert.is(e.rule, 'network.ssrf-blocked');
  const deny = await violation(Promise.resolve(a2aSend.run({ peer: 'echo', text: 'x' }, ctx({ level: 'none', capabilities: { network: { mode: 'deny' } } } as SandboxSpec, [peer()]))));
  assert.is(deny.rule, 'network.mode');
  assert.is(server.seen.length, 0);
});

test('an unknown peer, or no peers configured, is a sandbox violation', async () => {
  assert.is((await violation(Promise.resolve(a2aSend.run({ peer: 'other', text: 'x' }, ctx(ALLOW_LOCAL, [peer()]))))).rule, 'a2a.peer');
  assert.is((await violation(Promise.resolve(a2aSend.run({ peer: 'echo', text: 'x' }, ctx(ALLOW_LOCAL, undefined))))).rule, 'a2a.unconfigured');
});

test('a wrong token: an error result that names the refusal, never the token', async () => {
  const wrong = { resolve: async () => 'not-the-token-1234' };
  const c = { ...ctx(ALLOW_LOCAL, undefined), a2a: a2aPeerPort([peer()], { secrets: wrong }) };
  const r = await a2aSend.run({ peer: 'echo', text: 'x' }, c);
  assert.ok(r.isError);
  const text = (r.content[0] as { text: string }).text;
  assert.match(text, /HTTP 401/);
  assert.not.match(text, /not-the-token|peer-token/);
});

test('max_artifacts of a peer reaches the client: a peer flooding artifacts is an error result naming the cap', async () => {
  const flood = await startSdkServer({ streaming: true, flood: { mode: 'artifacts', partBytes: 10, events: 500 } });
  try {
    const r = await a2aSend.run({ peer: 'echo', text: 'x' }, ctx(ALLOW_LOCAL, [{ name: 'echo', card_url: flood.url, allow_loopback: true, max_artifacts: 3 }]));
    assert.ok(r.isError);
    assert.match((r.content[0] as { text: string }).text, /more than 3 artifacts .*\(max_artifacts\)/);
    assert.is(flood.canceled.length, 1);
  } finally {
    await flood.close();
  }
});

test('a2a.peers schema: name, http(s) card_url, secret_ref; unique names; result caps in range', () => {
  const ok = v.safeParse(runtimeConfigSchema, { a2a: { peers: [{ name: 'weather', card_url: 'https://w.example', auth: { secret_ref: 'W' }, timeout_ms: 30000 }] }, tools: { ask: { builtin: 'a2a-send' } } });
  assert.ok(ok.success);
  const bad = (peers: unknown) => !v.safeParse(runtimeConfigSchema, { a2a: { peers } }).success;
  assert.ok(bad([{ name: 'x', card_url: 'file:///etc/passwd' }]));
  assert.ok(bad([{ name: 'x', card_url: 'http://a' }, { name: 'x', card_url: 'http://b' }]));
  assert.ok(bad([{ name: 'x', card_url: 'http://a', auth: { token: 'inline' } }]), 'credentials only by secret_ref');
  assert.ok(bad([{ name: 'has space', card_url: 'http://a' }]));
  assert.ok(v.safeParse(runtimeConfigSchema, { a2a: { peers: [{ name: 'x', card_url: 'http://a', max_result_bytes: 65536, max_artifacts: 10 }] } }).success);
  assert.ok(bad([{ name: 'x', card_url: 'http://a', max_result_bytes: 10 }]));
  assert.ok(bad([{ name: 'x', card_url: 'http://a', max_artifacts: 0 }]));
});

test.run();
