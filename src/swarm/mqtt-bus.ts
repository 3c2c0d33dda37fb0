// The swarm over an MQTT broker: built on the MQTT transport's presence and request/response
// once it lands (docs/swarm.md). Until then an mqtt:// swarm bus is refused at STARTING.
import type { Clock, Logger } from '../kernel/ports.ts';
import { ClawError } from '../protocol/errors.ts';
import type { PeerBus } from './bus.ts';

export interface MqttBusOptions {
  self: string;
  log: Logger;
  clock: Clock;
  staleAfterMs: number;
}

export async function openMqttBus(uri: string, _o: MqttBusOptions): Promise<PeerBus> {
  throw new ClawError('unsupported', `swarm.bus ${uri.replace(/\/\/[^@/]*@/, '//')}: the MQTT swarm bus is not available in this build`);
}
