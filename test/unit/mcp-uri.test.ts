import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { formatStdioUri, parseMcpUri } from '../../src/tools/mcp/uri.ts';
import { mcpTargetOf } from '../../src/tools/mcp/backend.ts';
import { McpError } from '../../src/tools/mcp/errors.ts';

const ok = (uri: string) => {
  const r = parseMcpUri(uri);
  if (!r.ok) throw new Error(`expected ${uri} to parse: ${r.message}`);
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

test('https:// and http:// (Streamable HTTP) are an unsupported transport, said plainly', () => {
  for (const u of ['https://mcp.example.com/web-fetch', 'http://localhost:3000/mcp']) {
    const r = bad(u);
    assert.is(r.reason, 'unsupported-transport');
    assert.match(r.message, /Streamable HTTP/);
    assert.match(r.message, /not supported/);
  }
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
  const e1 = (() => { try { mcpTargetOf('mcp://x'); } catch (e) { return e; } })() as McpError;
  assert.instance(e1, McpError);
  assert.is(e1.code, 'config');
  const e2 = (() => { try { mcpTargetOf('https://x'); } catch (e) { return e; } })() as McpError;
  assert.is(e2.code, 'unsupported-transport');
});

test.run();
