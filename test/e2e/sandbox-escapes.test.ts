// Tools that try to get out, end to end through dist/claw.mjs: each attempt must fail with the right
// error and leave nothing running.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, symlinkSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { agent, manifest, processesWith } from './helpers/l2-agent.ts';

const tool = (name: string, schema = '{ type: "object" }') => `    - inline:
        name: "${name}"
        description: "${name}"
        input_schema: ${schema}`;

const scoped = (dir: string, extra = '') => `      level: "process"
      capabilities:
        filesystem:
          mode: "scoped"
          mount_paths:
            - { path: "${dir}/work", permissions: "rw" }
            - { path: "${dir}/ref", permissions: "ro" }
          denied_paths: ["${dir}/work/private"]
${extra}`;

test('file-read / file-write: .., symlinks, denied paths and read-only mounts cannot leave the scope', async () => {
  const a = await agent(manifest({ tools: [tool('file-read'), tool('file-write')].join('\n'), sandbox: scoped('__DIR__') }), '', (dir) => {
    // The manifest names the temp dir: rewrite the placeholder now that it exists.
    const p = join(dir, 'claw.yaml');
    writeFileSync(p, readFileSync(p, 'utf8').replaceAll('__DIR__', dir));
    mkdirSync(join(dir, 'work/private'), { recursive: true });
    mkdirSync(join(dir, 'ref'));
    writeFileSync(join(dir, 'work/ok.txt'), 'inside');
    writeFileSync(join(dir, 'work/private/key'), 'hidden');
    writeFileSync(join(dir, 'ref/doc.txt'), 'reference');
    writeFileSync(join(dir, 'outside.txt'), 'outside');
    symlinkSync('/etc/passwd', join(dir, 'work/passwd-link'));
    symlinkSync(join(dir, 'outside.txt'), join(dir, 'work/outside-link'));
  });
  try {
    const d = a.dir;
    const read = (path: string, rid: string) => a.call('file-read', { path }, rid);
    assert.equal((await read(`${d}/work/ok.txt`, 'r-ok')).result.content, [{ type: 'text', text: 'inside' }]);
    assert.equal((await read('ok.txt', 'r-rel')).result.content, [{ type: 'text', text: 'inside' }], 'relative to the writable mount');
    assert.equal((await read(`${d}/ref/doc.txt`, 'r-ro')).result.content, [{ type: 'text', text: 'reference' }]);
    for (const [path, rid] of [
      [`${d}/work/../outside.txt`, 'r-dotdot'],
      ['../outside.txt', 'r-rel-dotdot'],
      ['/etc/passwd', 'r-abs'],
      [`${d}/work/passwd-link`, 'r-link-etc'],
      [`${d}/work/outside-link`, 'r-link-out'],
      [`${d}/work/private/key`, 'r-denied'],
    ]) {
      const r = await read(path, rid);
      assert.is(r.error?.code, -32010, `${path}: ${JSON.stringify(r)}`);
      assert.is(r.error.data.rule, 'filesystem');
      assert.not.match(JSON.stringify(r), 'root:x:0', 'nothing of the file leaks');
    }
    const w = await a.call('file-write', { path: `${d}/work/new.txt`, content: 'made' }, 'w-ok');
    assert.is(w.error, undefined, JSON.stringify(w));
    assert.is(readFileSync(`${d}/work/new.txt`, 'utf8'), 'made');
    const ro = await a.call('file-write', { path: `${d}/ref/doc.txt`, content: 'overwritten' }, 'w-ro');
    assert.is(ro.error.code, -32010);
    assert.is(readFileSync(`${d}/ref/doc.txt`, 'utf8'), 'reference');
    const out = await a.call('file-write', { path: `${d}/work/../escaped.txt`, content: 'x' }, 'w-out');
    assert.is(out.error.code, -32010);
    assert.ok(!existsSync(`${d}/escaped.txt`));
    const viaLink = await a.call('file-write', { path: `${d}/work/outside-link`, content: 'x' }, 'w-link');
    assert.is(viaLink.error.code, -32010);
    assert.is(readFileSync(`${d}/outside.txt`, 'utf8'), 'outside');
  } finally {
    await a.close();
  }
});

test('exec tools: the parent environment (a secret) is not visible; argv metacharacters stay literal', async () => {
  const runtime = `tools:
  env-dump:
    exec: { bin: /usr/bin/env }
  args:
    exec: { bin: /bin/echo, argv: ["{{value}}"] }
`;
  const a = await agent(manifest({ tools: [tool('env-dump'), tool('args')].join('\n'), sandbox: '      level: "process"\n      capabilities:\n        filesystem: { mode: "read-only" }' }), runtime);
  try {
    const env = await a.call('env-dump', {}, 'e-1');
    const text = env.result.content[0].text as string;
    assert.not.match(text, 'CLAW_TEST_SECRET');
    assert.match(text, /^PATH=/m);
    for (const v of ['; touch /tmp/claw-pwned', '$(touch /tmp/claw-pwned)', '`touch /tmp/claw-pwned`', '| cat /etc/shadow']) {
      const r = await a.call('args', { value: v }, `arg-${v}`);
      assert.equal(r.result.content, [{ type: 'text', text: `${v}\n` }]);
    }
    assert.ok(!existsSync('/tmp/claw-pwned'), 'no shell ever ran the metacharacters');
  } finally {
    await a.close();
  }
});

test('a grandchild that calls setsid to leave the process group dies with the tool (bubblewrap pid namespace)', async () => {
  const marker = `claw-setsid-${process.pid}-${Date.now()}`;
  const runtime = `tools:
  escaper:
    exec:
      bin: /bin/sh
      argv: ["-c", "setsid sh -c 'sleep 60; : ${marker}' & sleep 61; : ${marker}"]
sandbox:
  kill_grace_ms: 200
`;
  const esc = `    - inline:
        name: "escaper"
        description: "forks a setsid grandchild"
        input_schema: { type: "object" }
        timeout_ms: 300`;
  const a = await agent(manifest({ tools: esc, sandbox: '      level: "process"\n      capabilities:\n        filesystem: { mode: "read-only" }' }), runtime);
  try {
    const r = await a.call('escaper', {}, 'esc-1');
    assert.is(r.error.code, -32014);
    await new Promise((res) => setTimeout(res, 500));
    assert.equal(processesWith(marker), [], 'nothing of the tool survives, not even the setsid grandchild');
  } finally {
    await a.close();
  }
});

test('a bounded fork storm under max_processes is contained and cleaned up', async () => {
  const marker = `claw-forks-${process.pid}-${Date.now()}`;
  const runtime = `tools:
  storm:
    exec:
      bin: /bin/sh
      argv: ["-c", "i=0; while [ $i -lt 200 ]; do (sleep 30; : ${marker}) & i=$((i+1)); done; wait"]
sandbox:
  kill_grace_ms: 200
`;
  const storm = `    - inline:
        name: "storm"
        description: "forks a lot"
        input_schema: { type: "object" }
        timeout_ms: 1500`;
  const a = await agent(
    manifest({ tools: storm, sandbox: '      level: "process"\n      capabilities:\n        filesystem: { mode: "read-only" }\n      resource_limits:\n        max_processes: 20' }),
    runtime,
  );
  try {
    const t0 = Date.now();
    const r = await a.call('storm', {}, 'storm-1');
    assert.ok(Date.now() - t0 < 6000, 'the machine stayed responsive');
    // Either the forks failed (bounded) and the tool finished with an error, or it timed out.
    assert.ok(r.error?.code === -32014 || r.result?.isError === true || r.result, JSON.stringify(r).slice(0, 300));
    await new Promise((res) => setTimeout(res, 500));
    const left = processesWith(marker);
    assert.equal(left, [], `processes left: ${left.length}`);
  } finally {
    await a.close();
  }
});

function listen(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer((_req, res) => res.end('internal data'));
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

test('http-fetch: SSRF through hostnames that resolve to loopback or the metadata address is refused', async () => {
  const { server, port } = await listen();
  // A private mount namespace where /etc/hosts maps test names to internal addresses: the runtime
  // resolves them for real (no stub inside the runtime), and only this test's processes see it.
  const hostsLine = `127.0.0.1 internal.test\\n169.254.169.254 metadata.test\\n`;
  const wrap = (dir: string) => ['unshare', '-m', 'sh', '-c', `printf '${hostsLine}' > ${dir}/hosts && mount --bind ${dir}/hosts /etc/hosts && exec "$0" "$@"`];
  const fetchTool = tool('http-fetch');
  const net = (ssrf: boolean) => `      level: "process"\n      capabilities:\n        network:\n          mode: "allow-all"\n          ssrf_protection: { enabled: ${ssrf} }`;
  const dirFor = `/tmp/claw-ssrf-${process.pid}-${Date.now()}`;
  mkdirSync(dirFor, { recursive: true });
  const guarded = await agent(manifest({ tools: fetchTool, sandbox: net(true) }), '', undefined, wrap(dirFor));
  try {
    for (const [url, rid] of [
      [`http://internal.test:${port}/`, 's-1'],
      [`http://metadata.test/latest/meta-data/`, 's-2'],
      [`http://127.0.0.1:${port}/`, 's-3'],
      [`http://[::ffff:127.0.0.1]:${port}/`, 's-4'],
      [`http://2130706433:${port}/`, 's-5'],
    ]) {
      const r = await guarded.call('http-fetch', { url }, rid);
      assert.is(r.error?.code, -32010, `${url}: ${JSON.stringify(r)}`);
      assert.is(r.error.data.rule, 'network.ssrf-blocked', url);
    }
  } finally {
    await guarded.close();
  }
  // The same name with SSRF protection off reaches the server: the refusal above was the guard's.
  const open = await agent(manifest({ tools: fetchTool, sandbox: net(false) }), '', undefined, wrap(dirFor));
  try {
    const r = await open.call('http-fetch', { url: `http://internal.test:${port}/` }, 'o-1');
    assert.is(r.error, undefined, JSON.stringify(r));
    assert.is(r.result.content[1].text, 'internal data');
  } finally {
    await open.close();
    server.close();
  }
});

test('http-fetch: network deny and host allowlists', async () => {
  const fetchTool = tool('http-fetch');
  const deny = await agent(manifest({ tools: fetchTool, sandbox: '      level: "process"\n      capabilities:\n        network: { mode: "deny" }' }));
  try {
    const r = await deny.call('http-fetch', { url: 'http://example.com/' }, 'd-1');
    assert.is(r.error.code, -32010);
    assert.is(r.error.data.rule, 'network.mode');
  } finally {
    await deny.close();
  }
  const allow = await agent(manifest({ tools: fetchTool, sandbox: '      level: "process"\n      capabilities:\n        network: { mode: "allowlist", allowed_hosts: ["*.example.org"] }' }));
  try {
    const r = await allow.call('http-fetch', { url: 'http://evil.example.com/' }, 'a-1');
    assert.is(r.error.code, -32010);
    assert.is(r.error.data.rule, 'network.host-not-allowed');
  } finally {
    await allow.close();
  }
});

test.run();
