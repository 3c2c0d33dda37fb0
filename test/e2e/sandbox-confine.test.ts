// What an exec tool can reach of the runtime itself, end to end through dist/claw.mjs (docs/security.md):
// the minimal /etc of a scoped sandbox and the runtime's own files hidden in every mode, the runtime's
// environment wiped from /proc/<pid>/environ, and SSRF protection / host allowlists that a child process
// cannot be held to refused at STARTING unless the runtime configuration names the downgrade.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initParams, startClaw, type ClawRun } from './helpers/claw-process.ts';
import { IDENTITY, manifest } from './helpers/l2-agent.ts';

const API_KEY = 'sk-provider-0123456789abcdef';
const FILE_SECRET = 'file-secret-fedcba9876543210';

const PROBE_TOOL = `    - inline:
        name: "probe"
        description: "runs the bound probe script"
        input_schema: { type: "object" }`;

interface Started {
  claw: ClawRun;
  init: any;
  call(id: string): Promise<string>;
  close(): Promise<void>;
}

/** An agent whose `probe` tool is `/bin/sh -c <script>`, with the given sandbox, runtime config lines, env and wrapper. */
async function start(o: { dir: string; sandbox: string; script: string; runtime?: string; env?: Record<string, string>; wrap?: string[] }): Promise<Started> {
  writeFileSync(join(o.dir, 'claw.yaml'), manifest({ tools: PROBE_TOOL, sandbox: o.sandbox }));
  const bind = `tools:\n  probe:\n    exec: { bin: /bin/sh, argv: ["-c", ${JSON.stringify(o.script)}] }\n`;
  writeFileSync(join(o.dir, 'claw.runtime.yaml'), `data_dir: ./data\n${bind}${o.runtime ?? ''}`);
  const claw = startClaw(['run', join(o.dir, 'claw.yaml')], { cwd: o.dir, env: { API_KEY, ...o.env }, wrap: o.wrap });
  const init = await claw.request('claw.initialize', initParams(), 'init').catch((e) => ({ error: String(e) }));
  return {
    claw,
    init,
    async call(id) {
      const r = await claw.request('claw.tool.call', { name: 'probe', arguments: {}, context: { request_id: id, identity: IDENTITY } });
      assert.ok(r.result, JSON.stringify(r.error ?? r) + claw.stderr().slice(-1500));
      return r.result.content.map((c: any) => c.text).join('');
    },
    async close() {
      await claw.end();
      assert.equal(claw.garbage, [], 'stdout carries protocol messages only');
    },
  };
}

/** Runs claw in a private mount namespace whose /etc is an overlay, with /etc/claw/secrets/API_KEY in it. */
function etcOverlay(dir: string): string[] {
  mkdirSync(join(dir, 'ovl/u'), { recursive: true });
  mkdirSync(join(dir, 'ovl/w'), { recursive: true });
  const setup = [
    'mount --make-rprivate /',
    `mount -t overlay overlay -o lowerdir=/etc,upperdir=${dir}/ovl/u,workdir=${dir}/ovl/w /etc`,
    'mkdir -p /etc/claw/secrets',
    `printf %s ${FILE_SECRET} > /etc/claw/secrets/API_KEY`,
    'exec "$0" "$@"',
  ].join(' && ');
  return ['unshare', '-m', 'sh', '-c', setup];
}

const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));

test('scoped: /etc holds only what programs need, never the secrets directory; sh, coreutils, python3 and node run', async () => {
  const dir = tmp('claw-etc-');
  const work = join(dir, 'work');
  mkdirSync(work);
  const script = [
    'echo "etc: $(ls /etc | tr "\\n" " ")"',
    'cat /etc/claw/secrets/API_KEY 2>/dev/null | grep -c file-secret || true',
    'echo "sh: $(echo ok)"',
    'echo "coreutils: $(printf abc | wc -c) $(id -un)"',
    'echo "python3: $(/usr/bin/python3 -c "print(6*7)" 2>&1)"',
    'echo "node: $(/usr/bin/node -e "console.log(6*7)" 2>&1)"',
  ].join('; ');
  const sandbox = `      level: "process"\n      capabilities:\n        network: { mode: "deny" }\n        filesystem:\n          mode: "scoped"\n          mount_paths:\n            - { path: "${work}", permissions: "rw" }`;
  const a = await start({ dir, sandbox, script, env: { CLAW_SECRETS_DIR: '/etc/claw/secrets' }, wrap: etcOverlay(dir) });
  try {
    assert.ok(a.init.result, JSON.stringify(a.init) + a.claw.stderr().slice(-1500));
    const out = await a.call('etc-1');
    const etc = out.match(/etc: (.*)/)![1].trim().split(' ');
    assert.not.ok(etc.includes('claw'), `no /etc/claw in the sandbox: ${etc.join(' ')}`);
    assert.not.ok(etc.includes('shadow'));
    assert.not.ok(etc.includes('resolv.conf'), 'no DNS configuration under network deny');
    for (const need of ['ld.so.cache', 'passwd', 'group', 'nsswitch.conf']) assert.ok(etc.includes(need), `${need} in ${etc.join(' ')}`);
    assert.match(out, /^0$/m, 'the secret file is not readable');
    assert.match(out, 'sh: ok');
    assert.match(out, 'coreutils: 3 root');
    assert.match(out, 'python3: 42');
    assert.match(out, 'node: 42');
    assert.not.match(out, FILE_SECRET);
  } finally {
    await a.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the runtime\'s own files stay hidden under any bind: secrets dir under a mount_path, data_dir, claw.runtime.yaml', async () => {
  const dir = tmp('claw-priv-');
  const secrets = join(dir, 'secrets');
  mkdirSync(secrets);
  writeFileSync(join(secrets, 'API_KEY'), FILE_SECRET);
  mkdirSync(join(dir, 'data/workspace'), { recursive: true });
  mkdirSync(join(dir, 'data/audit'), { recursive: true });
  writeFileSync(join(dir, 'data/audit/log.jsonl'), 'audit-record');
  writeFileSync(join(dir, 'data/workspace/note.txt'), 'shared-note');
  // The manifest's own directory is the mount: it holds the secrets dir, data_dir and claw.runtime.yaml.
  const script = [
    `echo "secrets: [$(ls ${secrets} | tr "\\n" " ")] $(cat ${secrets}/API_KEY 2>/dev/null | grep -c file-secret)"`,
    `echo "data: [$(ls ${dir}/data | tr "\\n" " ")] audit=$(cat ${dir}/data/audit/log.jsonl 2>/dev/null)"`,
    `echo "workspace: $(cat ${dir}/data/workspace/note.txt) $(echo written > ${dir}/data/workspace/out.txt && echo rw-ok)"`,
    `echo "config: [$(cat ${dir}/claw.runtime.yaml | head -c 40)]"`,
  ].join('; ');
  const modes = [
    `        filesystem:\n          mode: "scoped"\n          mount_paths:\n            - { path: "${dir}", permissions: "rw" }`,
    '        filesystem: { mode: "read-only" }',
    '        filesystem: { mode: "full" }',
  ];
  try {
    for (const fs of modes) {
      const a = await start({ dir, sandbox: `      level: "process"\n      capabilities:\n        network: { mode: "deny" }\n${fs}`, script, env: { CLAW_SECRETS_DIR: secrets } });
      try {
        assert.ok(a.init.result, JSON.stringify(a.init) + a.claw.stderr().slice(-1500));
        const out = await a.call(`priv-${modes.indexOf(fs)}`);
        assert.match(out, 'secrets: [] 0', fs);
        assert.match(out, /data: \[(workspace )?\] audit=\n/, fs);
        assert.match(out, 'workspace: shared-note', fs);
        if (!fs.includes('read-only')) assert.match(out, 'rw-ok', fs);
        assert.match(out, 'config: []', fs);
        assert.not.match(out, FILE_SECRET);
      } finally {
        await a.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a mount_path inside the secrets directory or data_dir is refused at STARTING', async () => {
  const dir = tmp('claw-priv-in-');
  mkdirSync(join(dir, 'secrets/sub'), { recursive: true });
  mkdirSync(join(dir, 'data/memory'), { recursive: true });
  try {
    for (const inside of [join(dir, 'secrets/sub'), join(dir, 'data/memory')]) {
      const sandbox = `      level: "process"\n      capabilities:\n        filesystem:\n          mode: "scoped"\n          mount_paths:\n            - { path: "${inside}", permissions: "ro" }`;
      const a = await start({ dir, sandbox, script: 'ls', env: { CLAW_SECRETS_DIR: join(dir, 'secrets') } });
      try {
        assert.is(a.init.error?.code, -32010, JSON.stringify(a.init));
        assert.match(a.init.error.message, 'a directory of the runtime itself');
      } finally {
        await a.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Prints how many lines of every ancestor's environ hold the provider key, how many environ files it read, and its own env's count. */
const ENVIRON_WALK = [
  'found=0; read=0; p=$PPID',
  'while [ "$p" -gt 1 ]; do if [ -r /proc/$p/environ ]; then read=$((read+1)); n=$(tr "\\0" "\\n" < /proc/$p/environ | grep -c sk-provider); found=$((found+n)); fi; p=$(awk "/^PPid:/{print \\$2}" /proc/$p/status); done',
  'own=$(env | grep -c sk-provider)',
  'echo "found=$found read=$read own=$own"',
].join('; ');

test('level none: an exec tool reads no secret in the environ of the runtime or any ancestor, nor in its own', async () => {
  const dir = tmp('claw-environ-');
  try {
    const a = await start({ dir, sandbox: '      level: "none"', script: ENVIRON_WALK });
    try {
      assert.ok(a.init.result, JSON.stringify(a.init) + a.claw.stderr().slice(-1500));
      const out = await a.call('environ-none');
      assert.match(out, /found=0 read=[1-9]\d* own=0/, out);
      assert.match(a.claw.stderr(), 'level none does not protect', 'the start log says what the level leaves open');
    } finally {
      await a.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('level process without bubblewrap: the same, and the provider key still works for the runtime', async () => {
  const dir = tmp('claw-environ-nobwrap-');
  // bubblewrap made unusable in a private mount namespace: the board this level then runs on.
  const wrap = ['unshare', '-m', 'sh', '-c', 'mount --make-rprivate / && mount --bind /dev/null "$(command -v bwrap)" && exec "$0" "$@"'];
  try {
    const a = await start({ dir, sandbox: '      level: "process"', script: ENVIRON_WALK, wrap, runtime: 'sandbox:\n  allow_downgrade: { bubblewrap: none }\n' });
    try {
      assert.ok(a.init.result, JSON.stringify(a.init) + a.claw.stderr().slice(-1500));
      const out = await a.call('environ-process');
      assert.match(out, /found=0 read=[1-9]\d* own=0/, out);
      assert.match(a.claw.stderr(), 'level process does not protect');
      assert.not.match(a.claw.stderr(), 'provider secret not resolvable', 'the runtime still resolves API_KEY from its environment');
    } finally {
      await a.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

async function withServer<T>(fn: (port: number) => Promise<T>): Promise<T> {
  const server = createServer((_q, r) => r.end('reached-loopback'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    return await fn((server.address() as { port: number }).port);
  } finally {
    server.close();
  }
}

test('ssrf_protection on an exec tool with network allow-all is refused at STARTING unless the downgrade is named', async () => {
  await withServer(async (port) => {
    const dir = tmp('claw-ssrf-');
    const sandbox = '      level: "process"\n      capabilities:\n        network:\n          mode: "allow-all"\n          ssrf_protection: { enabled: true }';
    const script = `/usr/bin/node -e "fetch('http://127.0.0.1:${port}/').then(r=>r.text()).then(console.log,e=>console.log('blocked',e.message))"`;
    try {
      const refused = await start({ dir, sandbox, script });
      try {
        assert.is(refused.init.error?.code, -32010, JSON.stringify(refused.init));
        assert.match(refused.init.error.message, 'ssrf_protection');
        assert.match(refused.init.error.message, 'allow_downgrade: { ssrf_protection: none }');
      } finally {
        await refused.close();
      }
      const named = await start({ dir, sandbox, script, runtime: 'sandbox:\n  allow_downgrade: { ssrf_protection: none }\n' });
      try {
        assert.ok(named.init.result, JSON.stringify(named.init));
        assert.match(named.claw.stderr(), 'ssrf_protection NOT enforced');
        assert.match(await named.call('ssrf-1'), 'reached-loopback', 'what the note says: the guard does not hold the tool');
      } finally {
        await named.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('a host allowlist on an exec tool is refused at STARTING unless network-allowlist names deny or allow-all', async () => {
  const dir = tmp('claw-allowlist-');
  const sandbox = '      level: "process"\n      capabilities:\n        network:\n          mode: "allowlist"\n          allowed_hosts: ["api.example.com"]\n          ssrf_protection: { enabled: false }';
  try {
    const refused = await start({ dir, sandbox, script: 'echo ran' });
    try {
      assert.is(refused.init.error?.code, -32010, JSON.stringify(refused.init));
      assert.match(refused.init.error.message, 'network-allowlist');
    } finally {
      await refused.close();
    }
    const named = await start({ dir, sandbox, script: 'echo ran', runtime: 'sandbox:\n  allow_downgrade: { network-allowlist: deny }\n' });
    try {
      assert.ok(named.init.result, JSON.stringify(named.init));
      assert.match(await named.call('al-1'), 'ran');
      assert.match(named.claw.stderr(), 'network allowlist enforced as \\"deny\\"');
    } finally {
      await named.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
