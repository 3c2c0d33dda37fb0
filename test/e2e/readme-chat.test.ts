// The README's first command: `claw chat examples/chat/claw.yaml` on a machine with no LLM.
// The example is copied as it is into a fresh directory (no .claw-data, HOME empty), and the README's
// own lines are piped in: the Ollama endpoint is refused, the offline rules answer, `echo` runs, `note`
// asks for approval and writes into the agent's workspace, and the conversation store opens on sql.js.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAW, ROOT } from './helpers/claw-process.ts';

const EXAMPLE = join(ROOT, 'examples', 'chat');
let dir = '';
const dirs: string[] = [];

test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Whether something answers on Ollama's default port (then the first provider would answer instead). */
function ollamaListening(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(11434, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

/**
 * `withoutBwrap`: bubblewrap hidden in a private mount namespace (root + unshare), as on a fresh machine
 * without the package: the README's command must not need it.
 */
function chat(lines: string[], withoutBwrap = false): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const argv = [CLAW, 'chat', 'claw.yaml', '--log-level', 'info'];
    const [cmd, args] = withoutBwrap
      ? ['unshare', ['-m', 'sh', '-c', 'for b in /usr/bin/bwrap /bin/bwrap; do [ -e "$b" ] && mount --bind /dev/null "$b"; done; exec "$0" "$@"', process.execPath, ...argv]]
      : [process.execPath, argv];
    const child = spawn(cmd, args as string[], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir, USER: 'reader' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`claw chat hung: ${stdout} ${stderr.slice(-1500)}`))), 30_000);
    child.on('exit', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr })));
    child.stdin.end(lines.map((l) => `${l}\n`).join(''));
  });
}

/** The example's files as a fresh clone has them (a local run may have left its .claw-data directory there). */
function copyExample(to: string): void {
  for (const f of readdirSync(EXAMPLE, { withFileTypes: true })) if (f.isFile()) copyFileSync(join(EXAMPLE, f.name), join(to, f.name));
}

const logs = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

test('README: hello, echo something, note shop: buy milk (approved) — offline rules, tools, sql.js memory', async () => {
  if (await ollamaListening()) {
    console.log('  (skipped: an Ollama-compatible server listens on 127.0.0.1:11434, the offline path is not taken)');
    return;
  }
  dir = mkdtempSync(join(tmpdir(), 'claw-readme-'));
  dirs.push(dir);
  copyExample(dir);
  assert.not.ok(existsSync(join(dir, '.claw-data')));

  const r = await chat(['hello', 'echo something', 'note shop: buy milk', 'y']);
  assert.is(r.code, 0, r.stderr);
  assert.is(
    r.stdout,
    "Hello! No language model is reachable, so I answer from my offline rules. Try 'echo <text>' or 'note <topic>: <text>'.\n" +
      'Done: something\n' +
      'Done: wrote 8 bytes to shop.txt\n',
  );
  assert.ok(r.stderr.includes('approval needed: tool file-write {"path":"shop.txt","content":"buy milk"} (writes a file) — approve? [y/N]'), r.stderr);
  assert.is(readFileSync(join(dir, '.claw-data', 'workspace', 'shop.txt'), 'utf8'), 'buy milk');

  const l = logs(r.stderr);
  const mem = l.find((e) => e.msg === 'memory open');
  assert.equal([mem.adapter, mem.stores, mem.database], ['sqljs', ['conversation:conversation'], join(dir, '.claw-data', 'memory', 'chat-memory.db')]);
  const ready = l.find((e) => e.msg === 'agent ready');
  assert.equal([ready.agent, ready.tools, ready.skills, ready.conversation_store, ready.audit], ['edge-assistant', 2, 1, 'conversation', true]);
  // Every turn tried the local endpoint first (never skipped), then fell back.
  const failed = l.filter((e) => e.msg === 'provider failed');
  assert.ok(failed.length >= 3 && failed.every((e) => e.provider === 'ollama' && e.reason === 'connect'), JSON.stringify(failed));

  // Unknown text: the rules say so honestly; the chat goes on and ends at end of input.
  const r2 = await chat(['what is the weather?']);
  assert.is(r2.stdout, "I am offline (no model reachable) and have no rule for that. Try 'hello', 'echo <text>' or 'note <topic>: <text>'.\n");
  assert.is(r2.code, 0);
});

test('README: the same first command on a machine without bubblewrap', async () => {
  if (process.getuid?.() !== 0 || (await ollamaListening())) {
    console.log('  (skipped: needs root for a private mount namespace, and no server on 127.0.0.1:11434)');
    return;
  }
  dir = mkdtempSync(join(tmpdir(), 'claw-readme-nobwrap-'));
  dirs.push(dir);
  copyExample(dir);
  const r = await chat(['echo something', 'note shop: buy milk', 'y'], true);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'Done: something\nDone: wrote 8 bytes to shop.txt\n');
  assert.is(readFileSync(join(dir, '.claw-data', 'workspace', 'shop.txt'), 'utf8'), 'buy milk');
});

test.run();
