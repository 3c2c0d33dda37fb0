// The agent as a Home Assistant device (docs/home-assistant.md): the MQTT discovery topics and config
// payloads, pure. Single-component discovery as Home Assistant's MQTT docs define it: one retained JSON
// config per entity on `<discovery_prefix>/<component>/[<node_id>/]<object_id>/config`, the same `device`
// mapping in each (so Home Assistant groups them), an `origin` mapping, a `unique_id` per entity, and
// availability on one topic (`online` / `offline`) that the MQTT Last Will sets to offline.
import { STATES } from '../../kernel/lifecycle.ts';
import type { ResolvedManifest } from '../../manifest/resolved.ts';
import type { HomeAssistantBinding } from '../config.ts';

/** Home Assistant's limit on a sensor's state (longer states are rejected); the full reply is an attribute. */
export const HA_STATE_MAX = 255;
/** The MQTT text entity takes at most 255 characters (its `max`). */
export const HA_TEXT_MAX = 255;

export interface DeviceTopics {
  prefix: string;
  node: string;
  /** `<prefix>/status`: Home Assistant's birth (`online`) and last will (`offline`). */
  haStatus: string;
  availability: string;
  command: string;
  replyState: string;
  replyAttributes: string;
  lifecycle: string;
}

export interface DiscoveryEntry {
  topic: string;
  payload: Record<string, unknown>;
}

/** A node id from the manifest's name: Home Assistant allows [a-zA-Z0-9_-] only. */
export function nodeIdOf(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'claw';
}

export function deviceTopics(b: HomeAssistantBinding, agentName: string): DeviceTopics {
  const prefix = (b.discovery_prefix ?? 'homeassistant').replace(/\/+$/, '');
  const node = b.node_id ?? nodeIdOf(agentName);
  const base = b.base_topic ?? `claw/${node}`;
  return {
    prefix,
    node,
    haStatus: `${prefix}/status`,
    availability: `${base}/availability`,
    command: `${base}/command`,
    replyState: `${base}/reply`,
    replyAttributes: `${base}/reply/attributes`,
    lifecycle: `${base}/lifecycle`,
  };
}

/** The three entities: a text whose commands become agent turns, the last reply, the lifecycle state. */
export function discoveryConfigs(t: DeviceTopics, m: Pick<ResolvedManifest, 'name' | 'version' | 'claw'>, runtimeVersion: string): DiscoveryEntry[] {
  const device = {
    identifiers: [`claw_${t.node}`],
    name: m.name,
    manufacturer: 'claw-edge',
    model: `CKP ${m.claw} agent`,
    ...(m.version ? { sw_version: m.version } : {}),
  };
  const origin = { name: 'claw-edge', sw_version: runtimeVersion };
  const common = {
    device,
    origin,
    availability_topic: t.availability,
    payload_available: 'online',
    payload_not_available: 'offline',
    qos: 1,
  };
  const at = (component: string, objectId: string) => `${t.prefix}/${component}/${t.node}/${objectId}/config`;
  return [
    {
      topic: at('text', 'command'),
      payload: {
        ...common,
        name: 'Command',
        unique_id: `${t.node}_command`,
        command_topic: t.command,
        min: 1,
        max: HA_TEXT_MAX,
        mode: 'text',
        icon: 'mdi:message-text',
      },
    },
    {
      topic: at('sensor', 'last_reply'),
      payload: {
        ...common,
        name: 'Last reply',
        unique_id: `${t.node}_last_reply`,
        state_topic: t.replyState,
        json_attributes_topic: t.replyAttributes,
        icon: 'mdi:message-reply-text',
      },
    },
    {
      topic: at('sensor', 'lifecycle'),
      payload: {
        ...common,
        name: 'Lifecycle',
        unique_id: `${t.node}_lifecycle`,
        state_topic: t.lifecycle,
        device_class: 'enum',
        options: [...STATES],
        entity_category: 'diagnostic',
        icon: 'mdi:state-machine',
      },
    },
  ];
}

/** A reply as a sensor state: at most 255 characters (code points), cut with an ellipsis. */
export function stateText(s: string): string {
  const cps = [...s];
  return cps.length <= HA_STATE_MAX ? s : `${cps.slice(0, HA_STATE_MAX - 1).join('')}…`;
}
