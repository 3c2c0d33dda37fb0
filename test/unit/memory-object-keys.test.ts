// Object content and metadata come back with every key they were stored with (docs/memory.md "Methods"),
// `__proto__`, `constructor` and `prototype` included: they are ordinary names in JSON text, e.g. metadata
// `{"constructor": "Ford"}`. Live and after a reopen (journal replay).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryHarness } from './helpers/memory-module.ts';

const wire = (text: string) => JSON.parse(text) as Record<string, unknown>;

test('keys named __proto__, constructor and prototype are kept in content and metadata', async () => {
  const h = await memoryHarness([{ name: 'context', type: 'conversation' }, { name: 'kv', type: 'key-value' }]);
  try {
    const content = '{"__proto__":{"x":1},"constructor":"Ford","prototype":[1],"a":2}';
    const metadata = '{"__proto__":{"polluted":true},"constructor":{"name":"c"},"b":3}';
    for (const store of ['context', 'kv']) {
      const r = await h.call('claw.memory.store', {
        store,
        entries: [{ key: 'k', content: wire(content), metadata: wire(metadata) }],
        context: { request_id: `r-${store}` },
      });
      assert.ok(r.result, r.error?.message);
    }
    const check = async (when: string) => {
      const conv = await h.call('claw.memory.query', { store: 'context', query: { type: 'time-range', time_range: {} } });
      const kv = await h.call('claw.memory.query', { store: 'kv', query: { type: 'key', key: 'k' } });
      for (const r of [conv, kv]) {
        const [e] = r.result.entries;
        assert.equal(JSON.parse(e.content), wire(content), `${when}: content`);
        assert.is(JSON.stringify(e.metadata), metadata, `${when}: metadata`);
      }
    };
    await check('live');
    await h.reopen();
    await check('after reopen');
    assert.is(({} as any).polluted, undefined);
  } finally {
    await h.dispose();
  }
});

test.run();
