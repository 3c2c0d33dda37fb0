// An A2A channel whose gate lets everyone through (mode open): for tests of the bindings, not of access.
import { createChannelGate } from '../../../src/channels/access.ts';
import { createA2aAccess, type A2aAccess } from '../../../src/a2a/access.ts';
import { captureLogger } from './fakes.ts';

export function openA2aAccess(channel = 'agents'): A2aAccess {
  const gate = createChannelGate(channel, { type: 'webhook', access_control: { mode: 'open' } }, { now: () => Date.now(), monotonic: () => performance.now() });
  return createA2aAccess({ channel, gate, policies: [], log: captureLogger() });
}
