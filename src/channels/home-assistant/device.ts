// Placeholder: the Home Assistant device lands in a later commit.
import { ClawError } from '../../protocol/errors.ts';
import type { Transport } from '../../kernel/ports.ts';
export async function openHomeAssistantDevice(o: { channel: string; [k: string]: unknown }): Promise<Transport> {
  throw new ClawError('config', `channel ${o.channel}: the Home Assistant device is not served yet`);
}
