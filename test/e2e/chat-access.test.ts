// `claw chat` with a declared cli Channel (profile §3, docs/channels.md): its access_control applies to
// the local user (--user). allowlist: an unlisted user is refused and the model is never asked;
// role-based: a viewer's turn runs with no tool offered and none executed, a user's turn with tools,
// and only an admin answers approvals on the terminal. End to end on dist/claw.mjs with the fake model.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openaiJson, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { makeAgent, chat, readWs, auditRecords, openaiProvider, msg, call, type Agent, useFakeLlm } from './chat-helpers.ts';

let llm: FakeLlm;
useFakeLlm(test, (l) => (llm = l), () => llm);

/** The test agent with its cli Channel's access_control replaced. */
function withAccess(access: Record<string, unknown>): Agent {
  const a = makeAgent({ providers: [openaiProvider(llm.url)] });
  const file = join(a.dir, 'claw.yaml');
  const m = JSON.parse(readFileSync(file, 'utf8'));
  m.spec.channels[0].inline.access_control = access;
  writeFileSync(file, JSON.stringify(m, null, 2));
  return a;
}

test('allowlist: an unlisted local user is refused line by line, nothing reaches the model; a listed one chats', async () => {
  const a = withAccess({ mode: 'allowlist', allowed_ids: ['alice'] });
  const r = await chat(a, ['PROMPT-1', 'PROMPT-2'], { args: ['--user', 'mallory'] });
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies.length, 2);
  for (const line of r.replies) assert.match(line, /^denied: Channel auth failed/);
  assert.not.ok(r.stdout.includes('alice'), 'a refusal never names an allowed id');
  assert.is(llm.requests.length, 0);

  llm.queue({ json: openaiJson({ content: msg('REPLY-alice') }) });
  const ok = await chat(a, ['PROMPT-3'], { args: ['--user', 'alice'] });
  assert.is(ok.stdout, 'REPLY-alice\n');
  assert.is(llm.requests.length, 1);
});

test('role-based: a viewer gets a tool-less turn (no tools offered, a tool call refused), a user runs tools, only an admin approves', async () => {
  const a = withAccess({ mode: 'role-based', roles: [{ id: 'vic', role: 'viewer' }, { id: 'uma', role: 'user' }, { id: 'ada', role: 'admin' }] });

  // Viewer: the request carries no tools and the prompt says so; a tool call the model makes anyway does not run.
  llm.queue({ json: openaiJson({ content: call('file-write', { path: 'v.txt', content: 'x' }) }) }, { json: openaiJson({ content: msg('REPLY-viewer') }) });
  const v = await chat(a, ['PROMPT-v'], { args: ['--user', 'vic'] });
  assert.is(v.code, 0, v.stderr);
  assert.is(v.stdout, 'REPLY-viewer\n');
  assert.is(llm.requests[0]!.body.tools, undefined);
  assert.ok((llm.requests[0]!.body.messages[0].content as string).includes('No tools are available'));
  assert.is(readWs(a, 'v.txt'), undefined);

  // User: the tool runs; an approval is asked but a user's "y" does not approve it (admins only).
  llm.requests.length = 0;
  llm.queue(
    { json: openaiJson({ content: call('file-write', { path: 'u.txt', content: 'x' }) }) },
    { json: openaiJson({ content: msg('REPLY-user-1') }) },
    { json: openaiJson({ content: call('careful-write', { path: 'c.txt', content: 'x' }) }) },
    { json: openaiJson({ content: msg('REPLY-user-2') }) },
  );
  const u = await chat(a, ['PROMPT-u1', 'PROMPT-u2', 'y'], { args: ['--user', 'uma'] });
  // No question was open for uma, so the trailing "y" was a message the (unscripted) model could not answer:
  // piped, a last message without an answer is exit status 1.
  assert.is(u.code, 1, u.stderr);
  assert.equal(u.replies.slice(0, 2), ['REPLY-user-1', 'REPLY-user-2']);
  assert.is(readWs(a, 'u.txt'), 'x');
  assert.is(readWs(a, 'c.txt'), undefined, 'a user may not approve');
  assert.equal(JSON.parse(llm.requests[3]!.body.messages.at(-1).content).tool_result.error.code, -32013);

  // Admin: the same approval, approved.
  llm.requests.length = 0;
  llm.queue({ json: openaiJson({ content: call('careful-write', { path: 'c.txt', content: 'ok' }) }) }, { json: openaiJson({ content: msg('REPLY-admin') }) });
  const ad = await chat(a, ['PROMPT-a', 'y'], { args: ['--user', 'ada'] });
  assert.is(ad.code, 0, ad.stderr);
  assert.is(ad.replies[0], 'REPLY-admin');
  assert.is(readWs(a, 'c.txt'), 'ok');
  const decided = auditRecords(a).filter((x) => x.kind === 'approval.decided').map((x) => x.data.decision);
  assert.equal(decided, ['denied', 'passed']);
});

test.run();
