// The in-memory transport pair runs the transport contract.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createMemoryPair } from '../../src/transports/memory-pair.ts';
import { transportContract, type ContractPeer } from './transport-contract.ts';

transportContract(
  'memory',
  async () => {
    const pair = createMemoryPair({ maxFrameBytes: 1024 });
    return {
      transport: pair.transport,
      maxFrameBytes: 1024,
      async peer(): Promise<ContractPeer> {
        const c = pair.client();
        const notifications: any[] = [];
        c.onNotification!((m) => notifications.push(m));
        return { send: (text, o) => c.sendRaw!(text, o), notifications, close: () => c.close() };
      },
      cleanup: async () => {},
    };
  },
  { multiSender: true },
);

test('memory: sending after close fails at once', async () => {
  const pair = createMemoryPair();
  await pair.transport.close();
  try {
    await pair.client().request({ jsonrpc: '2.0', id: 1, method: 'm' }, { timeoutMs: 100 });
    assert.unreachable();
  } catch (e) {
    assert.is((e as { code?: string }).code, 'closed');
  }
});

test.run();
