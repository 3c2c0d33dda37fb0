// `mqtt-read`: { topic: string } → the topic's last retained value on the broker of claw.runtime.yaml
// `mqtt_tools:` (docs/tools.md), e.g. a device's state. The topic must match one of `mqtt_tools.read`;
// the broker host must pass the sandbox's network rules (./mqtt-publish.ts).
import { SandboxViolation, textResult, type ToolResult } from '../types.ts';
import type { BuiltinDef } from './def.ts';
import { mqttPortFor } from './mqtt-publish.ts';
import { topicAllowed, topicProblem } from './mqtt-topics.ts';

const DEFAULT_READ_TIMEOUT_MS = 2000;

export const mqttRead: BuiltinDef = {
  name: 'mqtt-read',
  touchesOs: false,
  inputSchema: { type: 'object', properties: { topic: { type: 'string', minLength: 1 } }, required: ['topic'] },
  async run(args, ctx): Promise<ToolResult> {
    const bad = topicProblem(args.topic);
    if (bad) return textResult(`mqtt-read: ${bad}`, true);
    const topic = args.topic as string;
    const port = mqttPortFor(ctx, 'mqtt-read');
    if (!topicAllowed(port.config.read, topic)) throw new SandboxViolation('mqtt.topic', `mqtt-read: topic ${topic} is not in mqtt_tools.read`);
    const value = await port.readRetained(topic, port.config.read_timeout_ms ?? DEFAULT_READ_TIMEOUT_MS, ctx.signal);
    return value === undefined ? textResult(`no retained value on ${topic}`) : textResult(value);
  },
};
