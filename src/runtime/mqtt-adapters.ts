// MQTT everywhere the runtime takes a URI: `--listen` / `transports:` and `claw send` (the bridge),
// the swarm bus, and queue channels. The tables stay free of mqtt.js; each entry loads its adapter on
// first use and mqtt.js itself only when a connection opens (src/transports/mqtt/load.ts).
import { LISTEN_FACTORIES } from '../transports/listen.ts';
import { CLIENT_FACTORIES } from '../transports/client.ts';
import { registerMqtt } from '../transports/mqtt/register.ts';
import { BUS_FACTORIES } from '../swarm/open-bus.ts';
import { registerMqttBus } from '../swarm/mqtt-register.ts';
import { CHANNEL_LISTENERS } from '../channels/listeners.ts';
import { registerMqttChannels } from '../channels/mqtt-register.ts';

export function registerMqttAdapters(): void {
  registerMqtt(LISTEN_FACTORIES, CLIENT_FACTORIES);
  registerMqttBus(BUS_FACTORIES);
  registerMqttChannels(CHANNEL_LISTENERS);
}
