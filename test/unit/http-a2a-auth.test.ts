// The HTTP listener's split between operators and A2A callers (docs/transports.md "Authentication", docs/a2a.md
// "Security"): a caller's credential is refused on routes that do not admit callers, whether a token or a client
// certificate; a credential that names no one is marked authenticated for the route to refuse; token refs that would read as
// another principal are refused at start.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as http from 'node:http';
import type { IncomingMessage } from 'node:http';
import { createHttpServer, type RouteContext } from '../../src/transports/http/server.ts';
import { parseHttpUrl, resolveHttpSettings } from '../../src/transports/http/settings.ts';
import { createRateLimiter } from '../../src/transports/http/limits.ts';
import { createAuthenticator, subjectName, type Authenticator, type AuthResult } from '../../src/transports/http/auth.ts';
import { captureLogger } from './helpers/fakes.ts';

async function serve(result: (served: boolean) => AuthResult, o: { servesA2a?: boolean; routes?: boolean } = {}) {
  const settings = resolveHttpSettings(parseHttpUrl('http://127.0.0.1:0/ckp'));
  const seen: RouteContext[] = [];
  const auth: Authenticator = { configured: true, check: (_req: IncomingMessage, served = false) => result(served) };
  const server = createHttpServer({ settings, auth, limiter: createRateLimiter(0, () => Date.now()), log: captureLogger(), http, servesA2a: o.servesA2a });
  const ok = (ctx: RouteContext, res: http.ServerResponse) => (seen.push(ctx), res.end('{}'));
  server.addRoute('/ckp', { auth: 'required', handle: (_q, res, ctx) => ok(ctx, res) });
  if (o.routes !== false) server.addRoute('/a2a', { auth: 'required', admitsCallers: true, handle: (_q, res, ctx) => ok(ctx, res) });
  await server.listen();
  const base = `http://127.0.0.1:${server.address().port}`;
  const get = async (path: string) => (await fetch(`${base}${path}`)).status;
  return { get, seen, close: () => server.close(0) };
}

test('a caller credential (a token or a certificate outside operator_cns) gets 403 on the CKP endpoint and passes on A2A', async () => {
  let servedSeen: boolean | undefined;
  const s = await serve((served) => ((servedSeen = served), { outcome: 'ok', principal: 'cn:partner', caller: true }));
  try {
    assert.is(await s.get('/ckp'), 403);
    assert.is(servedSeen, true, 'the authenticator is told the listener serves A2A');
    assert.is(await s.get('/a2a'), 200);
    assert.is(s.seen[0].principal, 'cn:partner');
    assert.is(s.seen[0].authenticated, true);
  } finally {
    await s.close();
  }
});

test('a credential that names no principal reaches the route marked authenticated (the A2A routes then refuse it, 401)', async () => {
  const s = await serve(() => ({ outcome: 'ok' }));
  try {
    assert.is(await s.get('/a2a'), 200);
    assert.equal([s.seen[0].principal, s.seen[0].authenticated], [undefined, true]);
  } finally {
    await s.close();
  }
});

test('a listener of a runtime that serves A2A tells callers apart before the A2A routes are added (they join after the bind)', async () => {
  let servedSeen: boolean | undefined;
  const s = await serve((served) => ((servedSeen = served), { outcome: 'ok', principal: 'cn:partner', caller: served }), { servesA2a: true, routes: false });
  try {
    assert.is(await s.get('/ckp'), 403);
    assert.is(servedSeen, true);
  } finally {
    await s.close();
  }
});

test('certificates on a listener serving A2A: operator only when the CN is listed; no CN (empty subject) is a caller; subjects without a CN escape their separators', () => {
  const auth = createAuthenticator([], true, ['ops-console']);
  const peer = (subject: Record<string, unknown>) => ({ headers: {}, socket: { authorized: true, getPeerCertificate: () => ({ subject }) } }) as unknown as IncomingMessage;
  assert.equal(auth.check(peer({ CN: 'ops-console' }), true).caller, false);
  assert.equal(auth.check(peer({ CN: 'partner' }), true).caller, true);
  const empty = auth.check(peer({}), true);
  assert.equal([empty.outcome, empty.principal, empty.caller], ['ok', undefined, true]);
  assert.equal(auth.check(peer({}), false).caller, false, 'a listener without A2A: every certificate the CA signed is an operator');
  assert.is.not(subjectName({ O: 'a,OU=b' }), subjectName({ O: 'a', OU: 'b' }));
  assert.is(subjectName({ O: 'a', OU: 'b' }), 'dn:O=a,OU=b');
});

test('token refs that would name another principal are refused at start: `local`, and anything with `:`', () => {
  const at = parseHttpUrl('http://127.0.0.1:0/ckp');
  assert.throws(() => resolveHttpSettings(at, { auth: { a2a_token_refs: ['local'] } }), /token ref "local" is reserved/);
  assert.throws(() => resolveHttpSettings(at, { auth: { bearer_token_refs: ['cn:ops'] } }), /token ref "cn:ops"/);
  assert.ok(resolveHttpSettings(at, { auth: { a2a_token_refs: ['LOCAL_PARTNER'] } }));
});

test.run();
