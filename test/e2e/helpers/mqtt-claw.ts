// Entry of an MQTT-enabled claw bundle for the e2e tests: the same runtime as targets/node.ts with the mqtt:/mqtts:
// schemes registered (src/transports/mqtt/register.ts). It exists while dist/claw.mjs cannot take mqtt.js inside
// the 400 KB budget (docs/size-budget.md); once listen.ts/client.ts carry the entries, registering again is a no-op.
import { LISTEN_FACTORIES } from '../../../src/transports/listen.ts';
import { CLIENT_FACTORIES } from '../../../src/transports/client.ts';
import { registerMqtt } from '../../../src/transports/mqtt/register.ts';
import { runProcess } from '../../../targets/node-env.ts';

registerMqtt(LISTEN_FACTORIES, CLIENT_FACTORIES);
void runProcess();
