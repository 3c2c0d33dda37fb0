// Entry of an MQTT-enabled claw bundle for the e2e tests: the same runtime as targets/node.ts with the mqtt:/mqtts:
// schemes registered (src/transports/mqtt/register.ts). dist/claw.mjs now registers them itself
// (src/runtime/mqtt-adapters.ts) and the e2e tests run it; only scripts/bench-mqtt.mjs still builds this entry.
import { LISTEN_FACTORIES } from '../../../src/transports/listen.ts';
import { CLIENT_FACTORIES } from '../../../src/transports/client.ts';
import { registerMqtt } from '../../../src/transports/mqtt/register.ts';
import { runProcess } from '../../../targets/node-env.ts';

registerMqtt(LISTEN_FACTORIES, CLIENT_FACTORIES);
void runProcess();
