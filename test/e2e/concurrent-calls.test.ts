// Many tool calls in flight on one session are normal (an operator or a swarm fanning out): each adds one abort
// listener to the session's signal until it ends, so Node's "possible EventTarget memory leak" warning at 11
// listeners would be noise on the operator's stderr. 16 concurrent calls: every one answers, no warning.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { agent, manifest } from './helpers/l2-agent.ts';

const NAPPER = `    - inline:
        name: "napper"
        description: "sleeps a little"
        input_schema: { type: "object" }`;
const RUNTIME = `tools:
  napper:
    exec:
      bin: /bin/sh
      argv: ["-c", "sleep 0.4; echo ok"]
`;

test('16 concurrent tool calls on one session: all answer, no MaxListenersExceededWarning', async () => {
  const a = await agent(manifest({ tools: NAPPER }), RUNTIME);
  try {
    const replies = await Promise.all(Array.from({ length: 16 }, (_, i) => a.call('napper', {}, `par-${i}`)));
    for (const r of replies) assert.ok(r.result, JSON.stringify(r));
    assert.not.match(a.claw.stderr(), 'MaxListenersExceeded');
  } finally {
    await a.close();
  }
});

test.run();
