// guardedFetch against real local servers. No public network is touched: every public-looking
// address is either refused before connecting or only ever handed to the SSRF check.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { FetchFailed, NetworkDenied, guardedFetch, type Lookup, type NetworkCaps } from '../../src/net/guarded-fetch.ts';
import { ssrfBlocked } from '../../src/net/ip-ranges.ts';

const OPEN: NetworkCaps = { mode: 'allow-all', ssrf_protection: { enabled: false } };
const GUARDED: NetworkCaps = { mode: 'allow-all' };

const hits: string[] = [];
let good: http.Server;
let other: http.Server;
let evil: http.Server | undefined;
let port = 0;
let otherPort = 0;

function handler(name: string): http.RequestListener {
  return (req, res) => {
    hits.push(`${name} ${req.method} ${req.url}`);
    if (name === 'evil') return void res.end('EVIL');
    const u = new URL(req.url ?? '/', 'http://x');
    const q = (k: string) => u.searchParams.get(k) ?? '';
    switch (u.pathname) {
      case '/hello':
        return void res.end('hello world');
      case '/echo': {
        const chunks: Buffer[] = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
          res.setHeader('content-type', 'application/json');
          res.setHeader('set-cookie', ['a=1', 'b=2']);
          res.end(JSON.stringify({ server: name, method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString() }));
        });
        return;
      }
      case '/redirect':
        res.writeHead(Number(q('status') || 302), { location: q('to') });
        return void res.end('moved');
      case '/chain': {
        const n = Number(q('n'));
        if (n <= 0) return void res.end('end of chain');
        res.writeHead(302, { location: `/chain?n=${n - 1}` });
        return void res.end();
      }
      case '/loop':
        res.writeHead(302, { location: '/loop' });
        return void res.end();
      case '/big': {
        const n = Number(q('n'));
        res.writeHead(200, { 'content-type': 'text/plain' });
        for (let i = 0; i < n; i += 1000) res.write('a'.repeat(Math.min(1000, n - i)));
        return void res.end();
      }
      case '/utf8':
        return void res.end('é'.repeat(100));
      case '/hang':
        return; // never answers
      case '/stall-body':
        res.writeHead(200, { 'content-length': '1000' });
        return void res.write('0123456789');
      default:
        res.writeHead(404);
        res.end('not found');
    }
  };
}

const listen = (s: net.Server, host: string, p = 0) =>
  new Promise<number>((resolve, reject) => {
    s.once('error', reject);
    s.listen(p, host, () => resolve((s.address() as AddressInfo).port));
  });
const close = (s: http.Server | net.Server | undefined) =>
  new Promise<void>((resolve) => {
    if (!s) return resolve();
    (s as http.Server).closeAllConnections?.();
    s.close(() => resolve());
  });

test.before(async () => {
  good = http.createServer(handler('good'));
  port = await listen(good, '127.0.0.1');
  other = http.createServer(handler('other'));
  otherPort = await listen(other, '127.0.0.1');
  // The "rebinding target": same port on 127.0.0.2 (Linux routes all of 127/8 to lo). If it cannot
  // be bound, connecting there is refused instead, which fails the pinning test just as well.
  const e = http.createServer(handler('evil'));
  try {
    await listen(e, '127.0.0.2', port);
    evil = e;
  } catch {
    evil = undefined;
  }
});

test.after(async () => {
  await Promise.all([close(good), close(other), close(evil)]);
});

/** A local DNS stub: fixed answers per name, counting calls. */
function stub(table: Record<string, string[] | string[][]>) {
  const calls: string[] = [];
  const lookup: Lookup = async (host) => {
    const n = calls.filter((c) => c === host).length;
    calls.push(host);
    const entry = table[host];
    if (!entry) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    // string[][]: one answer per successive call (the last one repeats)
    const answer = Array.isArray(entry[0]) ? (entry as string[][])[Math.min(n, entry.length - 1)] : (entry as string[]);
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { lookup, calls };
}

/** Test-only SSRF verdict: 127.0.0.1 (our server) counts as public, everything else as usual. */
const loopbackIsPublic = (a: string) => (a === '127.0.0.1' ? null : ssrfBlocked(a));
/** 127.0.0.1 counts as public for the first check only: the first hop reaches our server, later hops do not. */
function publicOnce() {
  let left = 1;
  return (a: string) => (a === '127.0.0.1' && left-- > 0 ? null : ssrfBlocked(a));
}

async function rejects<T extends Error>(p: Promise<unknown>, cls: new (...a: never[]) => T, check: (e: T) => void = () => {}): Promise<T> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof cls)) throw new Error(`expected ${cls.name}, got ${(e as Error)?.name}: ${(e as Error)?.message}`);
    check(e);
    return e;
  }
  throw new Error(`expected ${cls.name}, but the fetch succeeded`);
}
const denied = (p: Promise<unknown>, reason: string, address?: string) =>
  rejects(p, NetworkDenied, (e) => {
    assert.is(e.reason, reason, e.message);
    if (address !== undefined) assert.is(e.detail.address, address);
  });
const failed = (p: Promise<unknown>, kind: string) => rejects(p, FetchFailed, (e) => assert.is(e.kind, kind, e.message));

const url = (path: string, host = '127.0.0.1', p = port) => `http://${host}:${p}${path}`;

// ------------------------------------------------------------------ (a) plain fetches

test('(a) SSRF off, allow-all: fetch succeeds with the exact body', async () => {
  const r = await guardedFetch(url('/hello'), {}, OPEN);
  assert.is(r.status, 200);
  assert.is(r.body, 'hello world');
  assert.is(r.truncated, false);
  assert.is(r.finalUrl, url('/hello'));
  assert.is(r.address, '127.0.0.1');
  assert.is(r.headers['content-length'], '11');
});

test('(a) method, headers and body reach the server; Host cannot be overridden', async () => {
  const r = await guardedFetch(url('/echo'), { method: 'post', headers: { 'X-Test': 'yes', Host: 'internal.corp' }, body: 'héllo' }, OPEN);
  const got = JSON.parse(r.body);
  assert.is(got.method, 'POST');
  assert.is(got.body, 'héllo');
  assert.is(got.headers['x-test'], 'yes');
  assert.is(got.headers.host, `127.0.0.1:${port}`);
  assert.is(got.headers['content-length'], '6');
  assert.is(got.headers['accept-encoding'], 'identity');
  assert.is(r.headers['set-cookie'], 'a=1, b=2');
  assert.is(r.headers['content-type'], 'application/json');
});

test('(a) the default resolver (localhost from the hosts file), falling back across checked addresses', async () => {
  const r = await guardedFetch(url('/hello', 'localhost'), {}, OPEN);
  assert.is(r.body, 'hello world');
  assert.is(r.address, '127.0.0.1');
});

test('(a) a refused first address falls back to the next checked one', async () => {
  const dns = stub({ 'dual.test': ['::1', '127.0.0.1'] });
  const r = await guardedFetch(url('/hello', 'dual.test'), {}, GUARDED, {
    lookup: dns.lookup,
    checkAddress: (a) => (a === '::1' || a === '127.0.0.1' ? null : ssrfBlocked(a)),
  });
  assert.is(r.body, 'hello world');
  assert.is(r.address, '127.0.0.1');
  assert.equal(dns.calls, ['dual.test']);
});

// ------------------------------------------------------------------ (b) IP literals under SSRF protection

test('(b) SSRF on: loopback literals are refused before any connection, in every spelling', async () => {
  const before = hits.length;
  const dns = stub({});
  for (const [u, addr] of [
    [url('/hello'), '127.0.0.1'],
    [url('/hello', '0x7f.1'), '127.0.0.1'],
    [url('/hello', '2130706433'), '127.0.0.1'],
    [url('/hello', '017700000001'), '127.0.0.1'],
    [url('/hello', '127.1'), '127.0.0.1'],
    [url('/hello', '127.0.0.1.'), '127.0.0.1'],
    [url('/hello', '[::1]'), '::1'],
    [url('/hello', '[::ffff:127.0.0.1]'), '::ffff:127.0.0.1'],
    [url('/hello', '[::ffff:7f00:1]'), '::ffff:127.0.0.1'],
    [url('/hello', '0.0.0.0'), '0.0.0.0'],
    [url('/hello', '0'), '0.0.0.0'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['http://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254'],
    ['http://10.0.0.1/', '10.0.0.1'],
  ]) {
    await denied(guardedFetch(u, {}, GUARDED, { lookup: dns.lookup }), 'ssrf-blocked', addr);
  }
  await denied(guardedFetch(url('/hello', 'localhost'), {}, GUARDED, { lookup: dns.lookup }), 'ssrf-blocked');
  await denied(guardedFetch(url('/hello', 'LOCALHOST.'), {}, GUARDED, { lookup: dns.lookup }), 'ssrf-blocked');
  assert.equal(dns.calls, []); // literals and localhost never reach DNS
  assert.is(hits.length, before); // and nothing was connected to
});

test('(b) block_private_ips: false still refuses loopback and metadata', async () => {
  const caps: NetworkCaps = { mode: 'allow-all', ssrf_protection: { enabled: true, block_private_ips: false } };
  await denied(guardedFetch(url('/hello'), {}, caps), 'ssrf-blocked', '127.0.0.1');
  await denied(guardedFetch('http://169.254.169.254/', {}, caps), 'ssrf-blocked', '169.254.169.254');
});

// ------------------------------------------------------------------ (c) names resolving to blocked addresses

test('(c) names resolving to blocked addresses are refused, whichever record is bad', async () => {
  const before = hits.length;
  const dns = stub({
    'evil.test': ['127.0.0.1'],
    'meta.test': ['169.254.169.254'],
    'mixed.test': ['8.8.8.8', '10.0.0.1'],
    'mixed6.test': ['2606:4700::1111', '::1'],
    'mapped.test': ['::ffff:127.0.0.1'],
    'imds6.test': ['fd00:ec2::254'],
  });
  const opts = { lookup: dns.lookup };
  await denied(guardedFetch(url('/hello', 'evil.test'), {}, GUARDED, opts), 'ssrf-blocked', '127.0.0.1');
  const e = await denied(guardedFetch('http://meta.test/latest/meta-data/', {}, GUARDED, opts), 'ssrf-blocked', '169.254.169.254');
  assert.is(e.detail.range, 'metadata');
  assert.is(e.detail.host, 'meta.test');
  await denied(guardedFetch('http://mixed.test/', {}, GUARDED, opts), 'ssrf-blocked', '10.0.0.1');
  await denied(guardedFetch('http://mixed6.test/', {}, GUARDED, opts), 'ssrf-blocked', '::1');
  await denied(guardedFetch('http://mapped.test/', {}, GUARDED, opts), 'ssrf-blocked', '::ffff:127.0.0.1');
  await denied(guardedFetch('http://imds6.test/', {}, GUARDED, opts), 'ssrf-blocked', 'fd00:ec2::254');
  assert.is(hits.length, before);
});

test('(c) resolver failures are FetchFailed dns', async () => {
  const dns = stub({ 'empty.test': [] });
  await failed(guardedFetch('http://nowhere.test/', {}, GUARDED, { lookup: dns.lookup }), 'dns');
  await failed(guardedFetch('http://empty.test/', {}, GUARDED, { lookup: dns.lookup }), 'dns');
});

// ------------------------------------------------------------------ (d) pinning

test('(d) pinning: the connection goes to the checked address, the name is never resolved again', async () => {
  // First answer passes the check; any later answer rebinds to 127.0.0.2 (blocked, and where the
  // "evil" server listens). A second resolution by the connection layer would land there.
  const dns = stub({ 'rebind.test': [['127.0.0.1'], ['127.0.0.2']] });
  const evilBefore = hits.filter((h) => h.startsWith('evil')).length;
  const r = await guardedFetch(url('/echo', 'rebind.test'), {}, GUARDED, { lookup: dns.lookup, checkAddress: loopbackIsPublic });
  const got = JSON.parse(r.body);
  assert.is(got.server, 'good');
  assert.is(r.address, '127.0.0.1');
  assert.equal(dns.calls, ['rebind.test']); // exactly one lookup for one hop
  assert.is(got.headers.host, `rebind.test:${port}`); // Host names the original host, not the IP
  assert.is(hits.filter((h) => h.startsWith('evil')).length, evilBefore);
});

test('(d) each hop resolves once and is re-checked: a rebind between hops is refused', async () => {
  const dns = stub({ 'rebind.test': [['127.0.0.1'], ['127.0.0.2']] });
  const evilBefore = hits.filter((h) => h.startsWith('evil')).length;
  await denied(
    guardedFetch(url('/redirect?to=/hello', 'rebind.test'), {}, GUARDED, { lookup: dns.lookup, checkAddress: loopbackIsPublic }),
    'ssrf-blocked',
    '127.0.0.2',
  );
  assert.equal(dns.calls, ['rebind.test', 'rebind.test']);
  assert.is(hits.filter((h) => h.startsWith('evil')).length, evilBefore);
});

test('(d) a three-hop chain on one name means four lookups, one per hop', async () => {
  const dns = stub({ 'stable.test': ['127.0.0.1'] });
  const r = await guardedFetch(url('/chain?n=3', 'stable.test'), {}, GUARDED, { lookup: dns.lookup, checkAddress: loopbackIsPublic });
  assert.is(r.body, 'end of chain');
  assert.is(r.finalUrl, url('/chain?n=0', 'stable.test'));
  assert.is(dns.calls.length, 4);
});

test('(d) https: TLS SNI carries the host name while the socket goes to the pinned address', async () => {
  const seen: (string | null)[] = [];
  const tls = net.createServer((sock) => {
    let buf = Buffer.alloc(0);
    sock.on('error', () => {});
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 5 && buf.length >= 5 + buf.readUInt16BE(3)) {
        seen.push(sniOf(buf));
        sock.destroy();
      }
    });
  });
  const tlsPort = await listen(tls, '127.0.0.1');
  try {
    const dns = stub({ 'sni.test': ['127.0.0.1'] });
    await failed(
      guardedFetch(`https://sni.test:${tlsPort}/`, {}, GUARDED, { lookup: dns.lookup, checkAddress: loopbackIsPublic }),
      'network',
    );
    await failed(guardedFetch(`https://127.0.0.1:${tlsPort}/`, {}, OPEN), 'network');
    assert.equal(seen, ['sni.test', null]); // no SNI for an IP literal
    assert.equal(dns.calls, ['sni.test']);
  } finally {
    await close(tls);
  }
});

/** server_name from a TLS ClientHello record, or null when absent. */
function sniOf(b: Buffer): string | null {
  let p = 5 + 4 + 2 + 32; // record header, handshake header, client_version, random
  p += 1 + b[p]; // session id
  p += 2 + b.readUInt16BE(p); // cipher suites
  p += 1 + b[p]; // compression methods
  const end = p + 2 + b.readUInt16BE(p);
  p += 2;
  while (p + 4 <= end) {
    const type = b.readUInt16BE(p);
    const len = b.readUInt16BE(p + 2);
    p += 4;
    if (type === 0) return b.subarray(p + 5, p + 5 + b.readUInt16BE(p + 3)).toString('latin1');
    p += len;
  }
  return null;
}

// ------------------------------------------------------------------ (e) redirects

test('(e) a redirect from an allowed server to a blocked address is refused at the hop', async () => {
  const targets: [string, string][] = [
    [url('/hello'), 'ssrf-blocked'],
    ['http://169.254.169.254/latest/meta-data/iam/security-credentials/', 'ssrf-blocked'],
    ['http://[fd00:ec2::254]/latest/meta-data/', 'ssrf-blocked'],
    [url('/hello', 'localhost'), 'ssrf-blocked'],
    [url('/hello', '[::1]'), 'ssrf-blocked'],
    [url('/hello', '0x7f.1'), 'ssrf-blocked'],
    [url('/hello', '2130706433'), 'ssrf-blocked'],
    [url('/hello', 'evil.test'), 'ssrf-blocked'],
    ['file:///etc/passwd', 'scheme'],
    ['gopher://127.0.0.1:6379/_INFO', 'scheme'],
  ];
  for (const [to, reason] of targets) {
    for (const status of [301, 302, 303, 307, 308]) {
      const before = hits.length;
      const dns = stub({ 'evil.test': ['127.0.0.1'] });
      await denied(
        guardedFetch(url(`/redirect?status=${status}&to=${encodeURIComponent(to)}`), {}, GUARDED, { lookup: dns.lookup, checkAddress: publicOnce() }),
        reason,
      );
      assert.equal(hits.slice(before).map((h) => h.split('?')[0]), ['good GET /redirect'], `${status} → ${to}`);
    }
  }
});

test('(e) redirect limits', async () => {
  const r = await guardedFetch(url('/chain?n=5'), {}, OPEN);
  assert.is(r.body, 'end of chain');
  assert.is(r.finalUrl, url('/chain?n=0'));
  await denied(guardedFetch(url('/chain?n=6'), {}, OPEN), 'too-many-redirects');
  await denied(guardedFetch(url('/chain?n=1'), { maxRedirects: 0 }, OPEN), 'too-many-redirects');
  assert.is((await guardedFetch(url('/chain?n=2'), { maxRedirects: 2 }, OPEN)).body, 'end of chain');
  const before = hits.length;
  await denied(guardedFetch(url('/loop'), {}, OPEN), 'too-many-redirects');
  assert.is(hits.length - before, 6); // the first request and 5 followed redirects
});

test('(e) redirect semantics: 303 turns POST into GET, 307 keeps it, credentials stay on their origin', async () => {
  let r = await guardedFetch(url('/redirect?status=303&to=/echo'), { method: 'POST', body: 'data', headers: { 'content-type': 'text/plain' } }, OPEN);
  let got = JSON.parse(r.body);
  assert.is(got.method, 'GET');
  assert.is(got.body, '');
  assert.is(got.headers['content-type'], undefined);
  r = await guardedFetch(url('/redirect?status=307&to=/echo'), { method: 'POST', body: 'data' }, OPEN);
  got = JSON.parse(r.body);
  assert.is(got.method, 'POST');
  assert.is(got.body, 'data');
  r = await guardedFetch(url('/redirect?to=/echo'), { headers: { Authorization: 'Bearer secret' } }, OPEN);
  assert.is(JSON.parse(r.body).headers.authorization, 'Bearer secret');
  r = await guardedFetch(url(`/redirect?to=${encodeURIComponent(url('/echo', '127.0.0.1', otherPort))}`), { headers: { Authorization: 'Bearer secret', 'X-Keep': '1' } }, OPEN);
  got = JSON.parse(r.body);
  assert.is(got.server, 'other');
  assert.is(got.headers.authorization, undefined);
  assert.is(got.headers['x-keep'], '1');
  assert.is(r.finalUrl, url('/echo', '127.0.0.1', otherPort));
});

test('(e) a 3xx without Location is an ordinary response', async () => {
  const r = await guardedFetch(url('/redirect?status=302'), {}, OPEN);
  assert.is(r.status, 302);
  assert.is(r.body, 'moved');
});

// ------------------------------------------------------------------ (f) mode and allowlist

test('(f) mode deny and a missing network block refuse everything', async () => {
  const before = hits.length;
  await denied(guardedFetch(url('/hello'), {}, { mode: 'deny' }), 'mode-deny');
  await denied(guardedFetch(url('/hello'), {}, undefined), 'mode-deny');
  await denied(guardedFetch(url('/hello'), {}, {}), 'mode-deny');
  assert.is(hits.length, before);
});

test('(f) allowlist: unlisted hosts are refused before DNS, on the first hop and on redirects', async () => {
  const dns = stub({ 'good.test': ['127.0.0.1'], 'api.good.test': ['127.0.0.1'], 'other.test': ['127.0.0.1'] });
  const caps: NetworkCaps = { mode: 'allowlist', allowed_hosts: ['good.test', '*.good.test'], ssrf_protection: { enabled: false } };
  const opts = { lookup: dns.lookup };
  await denied(guardedFetch(url('/hello'), {}, caps, opts), 'host-not-allowed');
  await denied(guardedFetch(url('/hello', 'other.test'), {}, caps, opts), 'host-not-allowed');
  await denied(guardedFetch(url('/hello', 'evilgood.test'), {}, caps, opts), 'host-not-allowed');
  assert.equal(dns.calls, []);
  assert.is((await guardedFetch(url('/hello', 'GOOD.test.'), {}, caps, opts)).body, 'hello world');
  assert.is((await guardedFetch(url('/hello', 'api.good.test'), {}, caps, opts)).body, 'hello world');
  const r = await guardedFetch(url(`/redirect?to=${encodeURIComponent(url('/hello', 'api.good.test'))}`, 'good.test'), {}, caps, opts);
  assert.is(r.finalUrl, url('/hello', 'api.good.test'));
  const before = hits.length;
  const e = await denied(guardedFetch(url(`/redirect?to=${encodeURIComponent(url('/hello', 'other.test'))}`, 'good.test'), {}, caps, opts), 'host-not-allowed');
  assert.is(e.detail.host, 'other.test');
  assert.is(hits.length, before + 1);
  // allowlist and SSRF together: listed, but resolving to loopback
  await denied(guardedFetch(url('/hello', 'good.test'), {}, { mode: 'allowlist', allowed_hosts: ['good.test'] }, opts), 'ssrf-blocked', '127.0.0.1');
});

test('(f) only http and https', async () => {
  for (const u of ['file:///etc/passwd', 'ftp://127.0.0.1/', 'data:text/plain,x', 'ws://127.0.0.1/']) await denied(guardedFetch(u, {}, OPEN), 'scheme');
  await failed(guardedFetch('not a url', {}, OPEN), 'invalid-url');
});

// ------------------------------------------------------------------ (g) body cap, timeout, abort

test('(g) body cap truncates and flags', async () => {
  let r = await guardedFetch(url('/big?n=5000'), { maxBytes: 100 }, OPEN);
  assert.is(r.body, 'a'.repeat(100));
  assert.is(r.truncated, true);
  r = await guardedFetch(url('/big?n=100'), { maxBytes: 100 }, OPEN);
  assert.is(r.body, 'a'.repeat(100));
  assert.is(r.truncated, false);
  r = await guardedFetch(url('/big?n=3000'), { maxBytes: 2000 }, OPEN); // the cut falls inside the second 1000-byte chunk write
  assert.is(r.body.length, 2000);
  assert.is(r.truncated, true);
  r = await guardedFetch(url('/big?n=10'), { maxBytes: 0 }, OPEN);
  assert.is(r.body, '');
  assert.is(r.truncated, true);
  r = await guardedFetch(url('/utf8'), { maxBytes: 51 }, OPEN); // 'é' is 2 bytes: no half character at the end
  assert.is(r.body, 'é'.repeat(25));
  assert.is(r.truncated, true);
  r = await guardedFetch(url('/big?n=200000'), {}, OPEN); // default cap is 1 MiB
  assert.is(r.body.length, 200000);
  assert.is(r.truncated, false);
});

test('(g) timeout: no answer, a stalled body, a resolver that never answers', async () => {
  let t0 = Date.now();
  await failed(guardedFetch(url('/hang'), { timeoutMs: 150 }, OPEN), 'timeout');
  assert.ok(Date.now() - t0 < 2000);
  t0 = Date.now();
  await failed(guardedFetch(url('/stall-body'), { timeoutMs: 150 }, OPEN), 'timeout');
  assert.ok(Date.now() - t0 < 2000);
  const never: Lookup = () => new Promise(() => {});
  await failed(guardedFetch('http://slow.test/', { timeoutMs: 100 }, GUARDED, { lookup: never }), 'timeout');
});

test('(g) abort signal', async () => {
  const ctl = new AbortController();
  setTimeout(() => ctl.abort(), 50);
  await failed(guardedFetch(url('/hang'), { signal: ctl.signal, timeoutMs: 5000 }, OPEN), 'aborted');
  const before = hits.length;
  await failed(guardedFetch(url('/hello'), { signal: AbortSignal.abort() }, OPEN), 'aborted');
  assert.is(hits.length, before);
});

test('connection refused is FetchFailed network', async () => {
  const s = net.createServer();
  const p = await listen(s, '127.0.0.1');
  await close(s);
  await failed(guardedFetch(url('/', '127.0.0.1', p), {}, OPEN), 'network');
});

test.run();
