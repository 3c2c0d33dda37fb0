// `claw doctor` against a provider that accepts connections and never answers (docs/providers.md "Doctor"):
// dist/claw.mjs reads claw.runtime.yaml `providers.<name>.timeout_ms` and gives each request that long, so
// it exits within the bound with a failure line naming the provider and the setting, not after its own 20 s.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { runClaw } from './helpers/claw-process.ts';
import { makeAgent, openaiProvider, removeAgents, type Agent } from './chat-helpers.ts';

let server: Server;
let url: string;
const sockets = new Set<Socket>();

test.before(async () => {
  server = createServer(() => {}); // accepts, reads the request, never answers
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.after(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
  removeAgents();
});

const doctor = (a: Agent, killAfterMs: number) => runClaw(['doctor', 'claw.yaml'], { cwd: a.dir, env: { HOME: a.dir }, killAfterMs });

test('claw doctor gives a silent provider its timeout_ms, exits 1 and names the provider and the setting', async () => {
  const a = makeAgent({ providers: [openaiProvider(url, { name: 'silent' })], runtime: { providers: { silent: { timeout_ms: 800 } } } });
  const r = await doctor(a, 10_000);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stdout, /silent \(primary\): openai-compatible .* NOT usable/);
  assert.ok(r.stdout.includes(`FAIL reachable: ${url}/v1/models: no answer within 800 ms (claw.runtime.yaml providers.silent.timeout_ms changes it)`), r.stdout);
  assert.ok(r.took < 8000, `took ${r.took} ms`);
});

test.run();
