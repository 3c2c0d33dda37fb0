// The bubblewrap probe asks for what a tool run needs (src/sandbox/bwrap-args.ts mounts a fresh /proc and /dev):
// under systemd's ProtectKernelTunables, bwrap starts but cannot mount /proc, and a probe without `--proc`
// reported bubblewrap working while every tool call then failed. A fake bwrap that refuses `--proc` stands in.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeHost } from '../../src/sandbox/host.ts';

const dir = mkdtempSync(join(tmpdir(), 'claw-probe-proc-'));
const bin = join(dir, 'bin');

test.after(() => rmSync(dir, { recursive: true, force: true }));

if (process.platform === 'linux') {
  test('bubblewrap that cannot mount /proc is reported as not working', async () => {
    mkdirSync(bin, { recursive: true });
    const fake = join(bin, 'bwrap');
    writeFileSync(fake, `#!/bin/sh\nfor a in "$@"; do [ "$a" = --proc ] && { echo "bwrap: Can't mount proc on /newroot/proc: Operation not permitted" >&2; exit 1; }; done\nexit 0\n`);
    chmodSync(fake, 0o755);
    const host = await probeHost({ path: `${bin}:${process.env.PATH ?? ''}` });
    assert.is(host.bwrap.path, fake);
    assert.is(host.bwrap.works, false);
    assert.is(host.bwrap.userns, false);
  });
}

test.run();
