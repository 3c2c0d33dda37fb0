import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NO_AGENT_TOOLS, perConversationAgent, type ConversationKey } from '../../src/channels/agent-adapter.ts';
import type { TurnResult } from '../../src/agent/types.ts';

const tick = () => new Promise((r) => setImmediate(r));

function factory() {
  const made: ConversationKey[] = [];
  const log: string[] = [];
  const release: (() => void)[] = [];
  const make = (k: ConversationKey) => {
    made.push(k);
    return {
      turn: (text: string) =>
        new Promise<TurnResult>((resolve) => {
          log.push(`${k.conversation}/${k.tools}:${text}`);
          release.push(() => resolve({ reply: `${k.conversation}:${text}`, outcome: 'message', toolCalls: [], rejections: 0 }));
        }),
    };
  };
  return { make, made, log, release };
}
const opts = (user: string, tools = true) => ({ channel: 'c', user, conversation: `c:${user}`, tools });

test('one agent per conversation and tools setting; a viewer gets its own tool-less agent', async () => {
  const f = factory();
  const a = perConversationAgent(f.make);
  const s = new AbortController().signal;
  void a.turn('1', s, opts('alice'));
  void a.turn('2', s, opts('bob'));
  void a.turn('3', s, opts('vic', false));
  await tick();
  assert.equal(f.made, [
    { conversation: 'c:alice', tools: true, channel: 'c', user: 'alice' },
    { conversation: 'c:bob', tools: true, channel: 'c', user: 'bob' },
    { conversation: 'c:vic', tools: false, channel: 'c', user: 'vic' },
  ]);
  assert.equal(f.log, ['c:alice/true:1', 'c:bob/true:2', 'c:vic/false:3'], 'different conversations run in parallel');
  assert.is(a.channelTurns, true);
});

test('turns of one conversation run one after another, in order', async () => {
  const f = factory();
  const a = perConversationAgent(f.make);
  const s = new AbortController().signal;
  const r1 = a.turn('first', s, opts('alice'));
  const r2 = a.turn('second', s, opts('alice'));
  await tick();
  assert.equal(f.log, ['c:alice/true:first']);
  f.release[0]();
  assert.is((await r1).reply, 'c:alice:first');
  await tick();
  assert.equal(f.log, ['c:alice/true:first', 'c:alice/true:second']);
  f.release[1]();
  assert.is((await r2).reply, 'c:alice:second');
  assert.equal(f.made.length, 1);
});

test('idle conversations beyond the bound are dropped, busy ones kept', async () => {
  const f = factory();
  const a = perConversationAgent(f.make, { maxConversations: 2 });
  const s = new AbortController().signal;
  void a.turn('x', s, opts('busy'));
  const done = a.turn('y', s, opts('idle'));
  await tick();
  f.release[1]();
  await done;
  void a.turn('z', s, opts('third'));
  await tick();
  assert.is(a.size, 2);
  void a.turn('again', s, opts('busy'));
  await tick();
  assert.equal(f.made.map((k) => k.conversation), ['c:busy', 'c:idle', 'c:third'], 'the busy conversation kept its agent');
});


test('NO_AGENT_TOOLS: lists nothing, refuses any call as a policy denial', async () => {
  assert.equal(NO_AGENT_TOOLS.list(), []);
  assert.equal(await NO_AGENT_TOOLS.call('shell', {}, { requestId: 'r', signal: new AbortController().signal }), {
    ok: false,
    code: -32011,
    message: 'Policy denied: tool shell is not available to a read-only (viewer) channel user',
  });
});

test.run();
