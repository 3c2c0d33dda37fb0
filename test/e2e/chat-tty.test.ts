// `claw chat` on a terminal (util-linux `script` gives it a pseudo-terminal): the progress line while the
// model thinks, a native answer streamed as it arrives (and not printed twice), and Ctrl-C cancelling the
// turn in progress while the chat goes on. Skipped with a note when `script` is not installed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import { CLAW } from './helpers/claw-process.ts';
import { openaiJson, openaiSse, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { makeAgent, openaiProvider, useFakeLlm, type Agent } from './chat-helpers.ts';

let llm: FakeLlm;
useFakeLlm(test, (l) => (llm = l), () => llm);
const hasScript = spawnSync('script', ['--version']).status === 0;

/** A chat under a pseudo-terminal that the test types into line by line. */
function session(a: Agent) {
  // exec: no shell between the terminal and claw (a shell that saw SIGINT would exit 130 on its own).
  const cmd = `exec ${[process.execPath, CLAW, 'chat', 'claw.yaml'].map((x) => `'${x}'`).join(' ')}`;
  const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: a.dir, env: { PATH: process.env.PATH ?? '', HOME: a.dir, USER: 'tester', TERM: 'dumb' } });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    type: (s: string) => child.stdin.write(s),
    get out() {
      return out;
    },
    async waitFor(re: RegExp, ms = 15_000): Promise<void> {
      const until = Date.now() + ms;
      while (!re.test(out)) {
        if (Date.now() > until) {
          child.kill('SIGKILL');
          throw new Error(`timed out waiting for ${re}; terminal so far: ${JSON.stringify(out.slice(-800))}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async end(): Promise<number | null> {
      child.stdin.end();
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

test('a native answer streams onto the terminal once, after the progress line', async () => {
  if (!hasScript) return void console.log('  (skipped: util-linux script is not installed)');
  const a = makeAgent({ providers: [openaiProvider(llm.url, { streaming: true })] });
  llm.queue({ sse: openaiSse({ text: ['STREAM-', 'ED ', 'ANSWER'] }), gapMs: 450 });
  const s = session(a);
  await s.waitFor(/> $/);
  s.type('PROMPT-1\n');
  await s.waitFor(/ANSWER/);
  s.type('/quit\n');
  assert.is(await s.end(), 0);
  assert.match(s.out, /thinking… \ds/);
  assert.is(s.out.split('STREAM-ED ANSWER').length, 2, `printed once: ${JSON.stringify(s.out)}`);
});

test('Ctrl-C cancels the turn in progress and the chat goes on; Ctrl-C at the prompt leaves', async () => {
  if (!hasScript) return void console.log('  (skipped: util-linux script is not installed)');
  const a = makeAgent({ providers: [openaiProvider(llm.url)] });
  llm.queue({ hang: true }, { json: openaiJson({ content: 'REPLY-2' }) });
  const s = session(a);
  await s.waitFor(/> $/);
  s.type('PROMPT-1\n');
  await s.waitFor(/thinking…/);
  s.type('\u0003');
  await s.waitFor(/\(cancelled — Ctrl-C again to leave\)/);
  s.type('PROMPT-2\n');
  await s.waitFor(/REPLY-2/);
  await s.waitFor(/REPLY-2[\s\S]*> $/);
  s.type('\u0003');
  assert.is(await s.end(), 0, JSON.stringify(s.out));
  assert.is(llm.requests.length, 2);
});

test.run();
