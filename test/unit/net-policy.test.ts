import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  FetchFailed,
  NetworkDenied,
  checkAddresses,
  checkTarget,
  connectOptions,
  defaultAddressCheck,
  netPolicy,
  redirectRequest,
  requestHeaders,
  utf8Prefix,
} from '../../src/net/net-policy.ts';
import { ClawError } from '../../src/protocol/errors.ts';

function denied(fn: () => unknown, reason: string): NetworkDenied {
  try {
    fn();
  } catch (e) {
    assert.instance(e, NetworkDenied);
    assert.is((e as NetworkDenied).reason, reason);
    return e as NetworkDenied;
  }
  throw new Error(`expected NetworkDenied ${reason}`);
}

test('netPolicy defaults fail closed', () => {
  assert.equal(netPolicy(undefined), { mode: 'deny', allowedHosts: [], ssrf: true, blockPrivate: true });
  assert.is(netPolicy({}).mode, 'deny');
  assert.is(netPolicy({ allowed_hosts: ['a.com'] }).mode, 'allowlist');
  assert.is(netPolicy({ allowed_hosts: [] }).mode, 'deny');
  assert.is(netPolicy({ mode: 'allow-all' }).mode, 'allow-all');
  assert.is(netPolicy({ mode: 'allow-all', ssrf_protection: {} }).ssrf, true);
  assert.is(netPolicy({ mode: 'allow-all', ssrf_protection: { dns_pinning: false } }).ssrf, true);
  assert.is(netPolicy({ mode: 'allow-all', ssrf_protection: { enabled: false } }).ssrf, false);
  assert.is(netPolicy({ mode: 'allow-all', ssrf_protection: { block_private_ips: false } }).blockPrivate, false);
});

test('checkTarget: scheme, mode, allowlist, names refused before DNS', () => {
  const all = netPolicy({ mode: 'allow-all' });
  for (const u of ['file:///etc/passwd', 'ftp://example.com/', 'gopher://127.0.0.1:6379/_', 'data:text/plain,hi', 'javascript:alert(1)', 'ws://example.com/']) {
    denied(() => checkTarget(u, all), 'scheme');
  }
  denied(() => checkTarget('https://example.com/', netPolicy({ mode: 'deny' })), 'mode-deny');
  denied(() => checkTarget('https://example.com/', netPolicy(undefined)), 'mode-deny');
  const list = netPolicy({ mode: 'allowlist', allowed_hosts: ['api.example.com', '*.googleapis.com'] });
  assert.is(checkTarget('https://API.example.com./x?y=1', list).host, 'api.example.com');
  assert.is(checkTarget('https://storage.googleapis.com/', list).host, 'storage.googleapis.com');
  const e = denied(() => checkTarget('https://googleapis.com/', list), 'host-not-allowed');
  assert.is(e.detail.host, 'googleapis.com');
  assert.instance(e, ClawError);
  assert.is(e.code, 'network-denied');
  denied(() => checkTarget('http://localhost:8080/', all), 'ssrf-blocked');
  denied(() => checkTarget('http://metadata.google.internal/computeMetadata/v1/', all), 'ssrf-blocked');
  // with SSRF protection off, names are not judged (the mode still is)
  assert.is(checkTarget('http://localhost/', netPolicy({ mode: 'allow-all', ssrf_protection: { enabled: false } })).host, 'localhost');
  try {
    checkTarget('http://exa mple.com/', all);
    assert.unreachable();
  } catch (err) {
    assert.instance(err, FetchFailed);
    assert.is((err as FetchFailed).kind, 'invalid-url');
  }
});

test('checkTarget: IP literals and ports', () => {
  const all = netPolicy({ mode: 'allow-all' });
  const t = checkTarget('http://0x7f.1:8080/a', all);
  assert.is(t.ip, '127.0.0.1');
  assert.is(t.port, 8080);
  assert.is(checkTarget('https://[::1]/', all).ip, '::1');
  assert.is(checkTarget('https://[::1]/', all).port, 443);
  assert.is(checkTarget('http://example.com/', all).ip, null);
  assert.is(checkTarget('http://example.com/', all).port, 80);
});

test('checkAddresses: one bad record refuses the host', () => {
  const p = netPolicy({ mode: 'allow-all' });
  const t = checkTarget('http://mixed.test/', p);
  const check = defaultAddressCheck(p);
  checkAddresses(t, ['8.8.8.8', '2606:4700::1111'], check);
  const e = denied(() => checkAddresses(t, ['8.8.8.8', '10.0.0.1'], check), 'ssrf-blocked');
  assert.is(e.detail.address, '10.0.0.1');
  assert.is(e.detail.range, 'private');
  // block_private_ips: false lets private ranges through, never loopback or metadata
  const open = defaultAddressCheck(netPolicy({ mode: 'allow-all', ssrf_protection: { block_private_ips: false } }));
  checkAddresses(t, ['10.0.0.1', '192.168.1.1'], open);
  denied(() => checkAddresses(t, ['10.0.0.1', '169.254.169.254'], open), 'ssrf-blocked');
  denied(() => checkAddresses(t, ['not-an-ip'], open), 'ssrf-blocked');
});

test('requestHeaders: no Host override, framing is ours, identity encoding', () => {
  const h = requestHeaders({ Host: 'internal.corp', 'Content-Length': '999', Connection: 'keep-alive', 'X-A': 'b', 'Transfer-Encoding': 'chunked' }, 'héllo');
  assert.equal(h, { 'x-a': 'b', 'accept-encoding': 'identity', 'content-length': '6' });
  assert.equal(requestHeaders({ 'Accept-Encoding': 'gzip' }, undefined), { 'accept-encoding': 'gzip' });
  assert.is(requestHeaders(undefined, new Uint8Array(3))['content-length'], '3');
});

test('redirectRequest: Fetch semantics', () => {
  const from = new URL('http://a.test/x/y');
  const post = { method: 'POST', headers: { 'content-type': 'text/plain', 'content-length': '2', authorization: 'Bearer t', cookie: 'c=1', 'x-k': 'v' }, body: 'hi' };
  let n = redirectRequest(303, '/z', from, post);
  assert.is(n.url, 'http://a.test/z');
  assert.equal(n.req, { method: 'GET', headers: { authorization: 'Bearer t', cookie: 'c=1', 'x-k': 'v' }, body: undefined });
  n = redirectRequest(302, 'other', from, post);
  assert.is(n.url, 'http://a.test/x/other');
  assert.is(n.req.method, 'GET');
  n = redirectRequest(307, 'http://a.test/q', from, post);
  assert.equal(n.req, post);
  n = redirectRequest(308, 'https://b.test/q', from, post);
  assert.is(n.req.method, 'POST');
  assert.is(n.req.body, 'hi');
  assert.is(n.req.headers.authorization, undefined); // credentials never cross origins
  assert.is(n.req.headers.cookie, undefined);
  assert.is(n.req.headers['x-k'], 'v');
  n = redirectRequest(302, 'http://a.test:81/', from, { method: 'GET', headers: { authorization: 'x' }, body: undefined });
  assert.is(n.req.headers.authorization, undefined); // another port is another origin
  n = redirectRequest(303, '/h', from, { method: 'HEAD', headers: {}, body: undefined });
  assert.is(n.req.method, 'HEAD');
  assert.throws(() => redirectRequest(302, 'http://[zz/', from, post), (e: unknown) => e instanceof FetchFailed);
});

test('connectOptions: hostname stays the name, SNI only for names', () => {
  const p = netPolicy({ mode: 'allow-all' });
  assert.equal(connectOptions(checkTarget('https://Api.Example.com:8443/p?q=1#f', p)), {
    hostname: 'api.example.com',
    port: 8443,
    path: '/p?q=1',
    servername: 'api.example.com',
  });
  assert.equal(connectOptions(checkTarget('https://[2606:4700::1111]/', p)), { hostname: '2606:4700::1111', port: 443, path: '/' });
  assert.equal(connectOptions(checkTarget('http://u%40x:p%3Aw@example.com/', p)).auth, 'u@x:p:w');
});

test('utf8Prefix never ends inside a character', () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const dec = (b: Uint8Array) => new TextDecoder('utf-8', { fatal: true }).decode(b);
  const s = 'aé€😀b'; // 1 + 2 + 3 + 4 + 1 bytes
  const bytes = enc(s);
  const want = ['', 'a', 'a', 'aé', 'aé', 'aé', 'aé€', 'aé€', 'aé€', 'aé€', 'aé€😀', 'aé€😀b'];
  for (let max = 0; max <= bytes.length; max++) assert.is(dec(utf8Prefix(bytes, max)), want[max], `max ${max}`);
  assert.is(utf8Prefix(bytes, 100).byteLength, bytes.length);
});

test.run();
