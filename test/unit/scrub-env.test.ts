// The wipe of the initial environment block (src/node/scrub-env.ts) against a fake memory: every entry but
// the harmless ones becomes NULs, and each is re-set through env first so the runtime keeps reading it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { envBounds, scrubInitialEnvironment, type ScrubIo } from '../../src/node/scrub-env.ts';

test('envBounds reads fields 50 and 51 of /proc/self/stat, whatever the command name holds', () => {
  const tail = Array.from({ length: 52 - 2 }, (_, i) => String(i + 3));
  tail[50 - 3] = '1000';
  tail[51 - 3] = '1100';
  assert.equal(envBounds(`42 (a) b (c) ${tail.join(' ')}`), [1000, 1100]);
  if (process.platform === 'linux') assert.ok(envBounds(readFileSync('/proc/self/stat', 'latin1')));
});

test('secret entries are re-set, then wiped; harmless ones stay byte for byte', () => {
  const text = 'PATH=/bin\0OPENAI_API_KEY=sk-1\0HOME=/root\0DB_PASSWORD=pw\0';
  const mem = Buffer.from(text, 'latin1');
  const env: Record<string, string | undefined> = {};
  const sets: string[] = [];
  const proxy = new Proxy(env, {
    set(t, k: string, v) {
      sets.push(k);
      t[k] = v;
      return true;
    },
  });
  Object.assign(env, { PATH: '/bin', OPENAI_API_KEY: 'sk-1', HOME: '/root', DB_PASSWORD: 'pw' });
  const io: ScrubIo = {
    env: proxy,
    readStat: () => `1 (x) ${Array.from({ length: 49 }, (_, i) => (i === 47 ? '100' : i === 48 ? String(100 + mem.length) : '0')).join(' ')}`,
    openMem: () => ({
      read: (addr, n) => Buffer.from(mem.subarray(addr - 100, addr - 100 + n)),
      write: (addr, data) => void data.copy(mem, addr - 100),
      close: () => undefined,
    }),
  };
  assert.equal(scrubInitialEnvironment(io), { scrubbed: ['OPENAI_API_KEY', 'DB_PASSWORD'] });
  assert.equal(sets, ['OPENAI_API_KEY', 'DB_PASSWORD']);
  assert.is(mem.toString('latin1').split('\0').filter(Boolean).join(' '), 'PATH=/bin HOME=/root');
  assert.is(mem.length, text.length);
  assert.is(env.OPENAI_API_KEY, 'sk-1');
});

test('entries that are no variable (no `=`, or nothing before it) are wiped too; odd values are re-set as read', () => {
  const text = 'PATH=/bin\0TOKEN_WITHOUT_EQUALS\0=leading\0EMPTY=\0EQ=a=b\0DUP=1\0DUP=2\0';
  const mem = Buffer.from(text, 'latin1');
  const env: Record<string, string | undefined> = { PATH: '/bin', EMPTY: '', EQ: 'a=b', DUP: '1' };
  const io: ScrubIo = {
    env,
    readStat: () => `1 (x) ${Array.from({ length: 49 }, (_, i) => (i === 47 ? '100' : i === 48 ? String(100 + mem.length) : '0')).join(' ')}`,
    openMem: () => ({
      read: (addr, n) => Buffer.from(mem.subarray(addr - 100, addr - 100 + n)),
      write: (addr, data) => void data.copy(mem, addr - 100),
      close: () => undefined,
    }),
  };
  assert.equal(scrubInitialEnvironment(io), { scrubbed: ['EMPTY', 'EQ', 'DUP'] });
  assert.is(mem.toString('latin1').split('\0').filter(Boolean).join(' '), 'PATH=/bin');
  assert.equal(env, { PATH: '/bin', EMPTY: '', EQ: 'a=b', DUP: '1' });
});

test.run();
