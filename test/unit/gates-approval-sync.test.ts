// A transport that answers an approval request synchronously, inside the announce itself (claw chat
// denies at once for a channel user who may not approve: src/cli/chat.ts). The decision must count:
// the pending approval exists before it is announced, so a deny that arrives during the announce is
// the call's outcome (-32013) — not an unknown request_id (acknowledged: false) followed by a wait for
// the full approval timeout.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runGates } from '../../src/gates/pipeline.ts';
import { compileArgumentSchema } from '../../src/tools/json-schema.ts';
import { boundTool, fakeImpl, makeCall, makeDeps, ok, settle, wire } from './helpers/gate-fakes.ts';

const check = compileArgumentSchema({ type: 'object' });

for (const decision of ['denied', 'approved'] as const) {
  test(`a ${decision === 'denied' ? 'deny' : 'approval'} given during the announce decides the call at once`, async () => {
    const deps = makeDeps({ autonomy: 'supervised' });
    const acknowledged: boolean[] = [];
    deps.announce = (n) => {
      deps.announced.push(n);
      acknowledged.push(deps.approvals.decide((n.params as { request_id: string }).request_id, decision, 'not on this channel'));
    };
    const impl = fakeImpl(async () => ok('ran'));
    const r = await settle(runGates(makeCall({ tool: boundTool({ impl }) }), check, deps));
    assert.equal(acknowledged, [true]);
    if (decision === 'denied') {
      assert.is(wire(r.error).code, -32013);
      assert.is(impl.calls.length, 0);
    } else {
      assert.equal(r.value, ok('ran'));
      assert.is(impl.calls.length, 1);
    }
    assert.is(deps.approvals.size, 0);
    assert.is(deps.clock.pending, 0, 'no approval timer left running');
  });
}

test.run();
