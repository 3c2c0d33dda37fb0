// A streamed tool call names its slot by index. A hostile or broken server that sends a huge, negative or
// fractional index gets a malformed-response failure at once: kept as an array index, 2³² - 2 made the pass
// that picks the first call visit four billion holes (the event loop stalled for hours).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openaiStream } from '../../src/provider/openai.ts';
import { anthropicStream } from '../../src/provider/anthropic.ts';
import { ProviderFailure } from '../../src/provider/failure.ts';

const BAD = [4294967294, 2 ** 31, 256, -1, 1.5];

function refused(run: () => void, what: string): void {
  const t = Date.now();
  let err: unknown;
  try {
    run();
  } catch (e) {
    err = e;
  }
  assert.ok(Date.now() - t < 1000, `${what}: answered in ${Date.now() - t} ms`);
  assert.instance(err, ProviderFailure, `${what}: ${String(err)}`);
  assert.is((err as ProviderFailure).reason, 'malformed');
}

test('OpenAI-compatible stream: a tool_calls index out of 0..255 is malformed, answered at once', () => {
  for (const index of BAD) {
    refused(() => {
      const d = openaiStream(() => {});
      d.event({ event: 'message', data: JSON.stringify({ choices: [{ delta: { tool_calls: [{ index, id: 'c', function: { name: 'echo', arguments: '{}' } }] } }] }) });
      d.event({ event: 'message', data: '[DONE]' });
      d.finish();
    }, `index ${index}`);
  }
  // The largest index allowed still works, and the call in it is the first one.
  const d = openaiStream(() => {});
  d.event({ event: 'message', data: JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 255, id: 'c', function: { name: 'echo', arguments: '{}' } }] } }] }) });
  d.event({ event: 'message', data: '[DONE]' });
  assert.equal(d.finish().toolCall, { id: 'c', name: 'echo', arguments: '{}' });
});

test('Anthropic stream: a tool_use block index out of 0..255 is malformed, answered at once', () => {
  for (const index of BAD) {
    refused(() => {
      const d = anthropicStream(() => {});
      d.event({ event: 'content_block_start', data: JSON.stringify({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: 't', name: 'echo', input: {} } }) });
      d.event({ event: 'message_stop', data: JSON.stringify({ type: 'message_stop' }) });
      d.finish();
    }, `index ${index}`);
  }
});

test.run();
