// `mqtt-publish`: { topic: string, payload: string, retain?: boolean } → publishes once with QoS 1 on the
// broker of claw.runtime.yaml `mqtt_tools:` (docs/tools.md). Confined twice: the topic must match one of
// `mqtt_tools.publish` (nothing else, no wildcard), and the broker host must pass the tool's sandbox
// network rules (mode deny → refused; allowlist → the host must be listed). A refusal is a sandbox
// violation (-32010), as for http-fetch.
import { SandboxViolation, textResult, type ToolResult } from '../types.ts';
import { hostAllowed } from '../../net/host-allowlist.ts';
import { netMode } from '../../sandbox/spec-view.ts';
import type { SandboxSpec } from '../../manifest/schema/index.ts';
import type { BuiltinContext, BuiltinDef } from './def.ts';
import type { MqttToolPort } from './mqtt-port.ts';
import { topicAllowed, topicProblem } from './mqtt-topics.ts';

const DEFAULT_MAX_PAYLOAD = 64 * 1024;

/** The port, or why there is none; and the broker host checked against the sandbox's network rules. */
export function mqttPortFor(ctx: BuiltinContext, tool: string): MqttToolPort {
  const port = ctx.mqtt;
  if (!port) throw new SandboxViolation('mqtt.unconfigured', `${tool}: no broker is configured (claw.runtime.yaml mqtt_tools:)`);
  checkBrokerHost(ctx.sandbox, port.host);
  return port;
}

function checkBrokerHost(sb: SandboxSpec, host: string): void {
  const mode = netMode(sb);
  if (mode === 'deny') throw new SandboxViolation('network.mode', 'the sandbox denies network access');
  if (mode === 'allowlist' && !hostAllowed(host, sb.capabilities?.network?.allowed_hosts)) {
    throw new SandboxViolation('network.host', `the broker host ${host} is not in the sandbox's allowed_hosts`);
  }
}

export const mqttPublish: BuiltinDef = {
  name: 'mqtt-publish',
  // In-process: the runtime's own MQTT client, which enforces the topic allowlist and the host rule itself.
  touchesOs: false,
  inputSchema: {
    type: 'object',
    properties: { topic: { type: 'string', minLength: 1 }, payload: { type: 'string' }, retain: { type: 'boolean' } },
    required: ['topic', 'payload'],
  },
  async run(args, ctx): Promise<ToolResult> {
    const bad = topicProblem(args.topic);
    if (bad) return textResult(`mqtt-publish: ${bad}`, true);
    if (typeof args.payload !== 'string') return textResult('mqtt-publish: payload must be a string', true);
    const topic = args.topic as string;
    const port = mqttPortFor(ctx, 'mqtt-publish');
    if (!topicAllowed(port.config.publish, topic)) throw new SandboxViolation('mqtt.topic', `mqtt-publish: topic ${topic} is not in mqtt_tools.publish`);
    const max = port.config.max_payload_bytes ?? DEFAULT_MAX_PAYLOAD;
    const bytes = new TextEncoder().encode(args.payload).length;
    if (bytes > max) return textResult(`mqtt-publish: payload of ${bytes} bytes exceeds ${max}`, true);
    const retain = args.retain === true;
    await port.publish(topic, args.payload, retain, ctx.signal);
    return textResult(`published ${bytes} bytes to ${topic}${retain ? ' (retained)' : ''}`);
  },
};
