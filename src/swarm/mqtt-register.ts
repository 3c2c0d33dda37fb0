// The `mqtt:` / `mqtts:` entries of the swarm bus table (./open-bus.ts). Separate so that
// dist/claw.mjs carries mqtt.js only once the size budget takes it (docs/size-budget.md), the
// same way src/transports/mqtt/register.ts adds the MQTT transport.
import type { BusFactory } from './open-bus.ts';

export const mqttBusFactory: BusFactory = async (uri, cfg, c) => (await import('./mqtt-bus.ts')).openMqttBus(uri, cfg, c);

export function registerMqttBus(table: Record<string, BusFactory>): void {
  table.mqtt = table.mqtts = mqttBusFactory;
}
