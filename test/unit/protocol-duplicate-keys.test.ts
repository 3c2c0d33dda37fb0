// A JSON object with a repeated name (RFC 8259 §4: names SHOULD be unique, receivers differ) is read as
// JSON.parse reads it: the last value wins, at every depth. One reading everywhere: the reply echoes that id, the
// handler sees those params, and a memory request's fingerprint (idempotency) is taken over them (docs/protocol.md).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Router, type Dispatch } from '../../src/kernel/router.ts';
import { InflightTracker } from '../../src/kernel/inflight.ts';
import { captureLogger, textFrame, until, type Reply } from './helpers/fakes.ts';

test('repeated names: the last id, method and params are the ones used', async () => {
  const seen: unknown[] = [];
  const dispatch: Dispatch = (method, params) => (seen.push([method, params]), { ok: true });
  const replies: Reply[] = [];
  const router = new Router({ dispatch, inflight: new InflightTracker(), log: captureLogger() });
  router.handle(textFrame('{"jsonrpc":"2.0","id":1,"method":"a","id":"two","method":"b","params":{"x":1,"x":2},"params":{"store":"s","store":"t"}}', replies), 'test');
  await until(() => replies.length === 1);
  assert.equal(seen, [['b', { store: 't' }]]);
  assert.equal(replies, [{ jsonrpc: '2.0', id: 'two', result: { ok: true } }]);
});

test.run();
