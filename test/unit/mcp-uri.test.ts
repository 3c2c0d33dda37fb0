import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { formatStdioUri, httpTargetProblem, parseMcpUri, type McpHttpTarget, type McpStdioTarget } from '../../src/tools/mcp/uri.ts';
import { mcpTargetOf } from '../../src/tools/mcp/backend.ts';
import { McpError } from '../../src/tools/mcp/errors.ts';

const ok = (uri: string): McpStdioTarget => {
  const r = parseMcpUri(uri);
  if (!r.ok) throw new Error(`expected ${uri} to parse: ${r.message}`);
  if (r.target.transport !== 'stdio') throw new Error(`expected ${uri} to be stdio`);
  return r.target;
};
const okHttp = (uri: string): McpHttpTarget => {
  const r = parseMcpUri(uri);
  if (!r.ok || r.target.transport !== 'http') throw new Error(`expected ${uri} to be an HTTP target`);
  return r.target;
};
const bad = (uri: string) => {
  const r = parseMcpUri(uri);
  if (r.ok) throw new Error(`expected ${uri} to be refused`);
  return r;
};

test('stdio:///abs/path: the command, no arguments', () => {
  assert.equal(ok('stdio:///usr/local/bin/mcp-github'), { transport: 'stdio', command: '/usr/local/bin/mcp-github', args: [], uri: 'stdio:///usr/local/bin/mcp-github' });
});

test('repeated arg= give the arguments in order; percent-decoding; + is literal', () => {
  const t = ok('stdio:///usr/bin/node?arg=/srv/mcp/dist/index.js&arg=--root&arg=/my%20data&arg=a+b&arg=x%26y%3Dz&arg=');
  assert.is(t.command, '/usr/bin/node');
  assert.equal(t.args, ['/srv/mcp/dist/index.js', '--root', '/my data', 'a+b', 'x&y=z', '']);
});

test('percent-encoded path', () => {
  assert.is(ok('stdio:///opt/My%20Servers/srv').command, '/opt/My Servers/srv');
});

test('scheme is case-insensitive', () => {
  assert.is(ok('STDIO:///bin/srv').command, '/bin/srv');
});

test('mcp:// is reserved by the spec and refused', () => {
  const r = bad('mcp://github/tools');
  assert.is(r.reason, 'reserved');
  assert.match(r.message, /reserved/);
  assert.match(r.message, /§5\.4/);
});

test('https:// is the Streamable HTTP transport (spec §5.4): the endpoint URL as given', () => {
  assert.equal(okHttp('https://mcp.example.com/web-fetch'), { transport: 'http', url: 'https://mcp.example.com/web-fetch', secure: true, uri: 'https://mcp.example.com/web-fetch' });
  assert.equal(okHttp('HTTPS://Mcp.Example.com:8443/mcp?x=1').url, 'https://mcp.example.com:8443/mcp?x=1');
  assert.is(okHttp('http://127.0.0.1:3001/mcp').secure, false);
});

test('HTTP URIs: no credentials, no fragment', () => {
  assert.match(bad('https://user:tok@mcp.example.com/mcp').message, /credentials do not belong in the manifest/);
  assert.not.match(bad('https://user:tok@mcp.example.com/mcp').message.replace(/"[^"]*"/, ''), /tok/);
  assert.match(bad('https://mcp.example.com/mcp#x').message, /fragment/);
  assert.match(bad('https://').message, /not a valid URL|no host/);
});

test('plain http:// only to a loopback literal and only when the runtime config allows it', () => {
  assert.is(httpTargetProblem(okHttp('https://mcp.example.com/mcp'), false), undefined);
  assert.match(httpTargetProblem(okHttp('http://mcp.example.com/mcp'), true)!, /only allowed to a loopback address/);
  assert.match(httpTargetProblem(okHttp('http://localhost:3000/mcp'), true)!, /only allowed to a loopback address/);
  assert.match(httpTargetProblem(okHttp('http://10.0.0.1:3000/mcp'), true)!, /only allowed to a loopback address/);
  assert.match(httpTargetProblem(okHttp('http://127.0.0.1:3000/mcp'), false)!, /allow_loopback: true/);
  assert.is(httpTargetProblem(okHttp('http://127.0.0.1:3000/mcp'), true), undefined);
  assert.is(httpTargetProblem(okHttp('http://[::1]:3000/mcp'), true), undefined);
});

test('other schemes are an unknown transport', () => {
  assert.is(bad('ws://host/x').reason, 'unsupported-transport');
});

test('malformed stdio URIs are refused with the reason', () => {
  assert.match(bad('stdio://host/bin/srv').message, /three slashes/);
  assert.match(bad('stdio:/bin/srv').message, /three slashes/);
  assert.match(bad('stdio:///').message, /executable/);
  assert.match(bad('stdio:///bin/').message, /executable/);
  assert.match(bad('stdio:///bin/srv#frag').message, /fragment/);
  assert.match(bad('stdio:///bin/srv?args=x').message, /arg=<value>/);
  assert.match(bad('stdio:///bin/srv?arg').message, /arg=<value>/);
  assert.match(bad('stdio:///bin/srv?arg=%E0%A4%A').message, /percent-encoding/);
  assert.match(bad('stdio:///bin/s%00rv').message, /NUL/);
  assert.match(bad('/bin/srv').message, /no scheme/);
  assert.match(bad('').message, /non-empty/);
});

test('formatStdioUri round-trips', () => {
  const args = ['/a b/index.js', '--x=1&2', '100%', 'plus+'];
  const uri = formatStdioUri('/usr/bin/my node', args);
  assert.equal(ok(uri).args, args);
  assert.is(ok(uri).command, '/usr/bin/my node');
  assert.is(formatStdioUri('/bin/srv'), 'stdio:///bin/srv');
});

test('mcpTargetOf throws McpError with code config / unsupported-transport', () => {
  const e3 = (() => { try { mcpTargetOf('ws://x'); } catch (e) { return e; } })() as McpError;
  assert.is(e3.code, 'unsupported-transport');
  const e1 = (() => { try { mcpTargetOf('mcp://x'); } catch (e) { return e; } })() as McpError;
  assert.instance(e1, McpError);
  assert.is(e1.code, 'config');
  assert.is(mcpTargetOf('https://x').transport, 'http');
});

test.run();
