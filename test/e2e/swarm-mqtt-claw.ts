// Entry of an MQTT-enabled claw bundle for the swarm e2e: the runtime of targets/node.ts with the
// mqtt:/mqtts: transports (engineer E's register.ts) and the mqtt swarm bus registered. It exists
// while dist/claw.mjs cannot take mqtt.js inside the size budget (docs/size-budget.md).
import { LISTEN_FACTORIES } from '../../src/transports/listen.ts';
import { CLIENT_FACTORIES } from '../../src/transports/client.ts';
import { registerMqtt } from '../../src/transports/mqtt/register.ts';
import { BUS_FACTORIES } from '../../src/swarm/open-bus.ts';
import { registerMqttBus } from '../../src/swarm/mqtt-register.ts';
import { runProcess } from '../../targets/node-env.ts';

registerMqtt(LISTEN_FACTORIES, CLIENT_FACTORIES);
registerMqttBus(BUS_FACTORIES);
void runProcess();
