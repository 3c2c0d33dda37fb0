// Placeholder: the Telegram channel's implementation lands in the next commit.
import { ClawError } from '../../protocol/errors.ts';
import type { Transport } from '../../kernel/ports.ts';
export async function openTelegramChannel(o: { channel: string; [k: string]: unknown }): Promise<Transport> {
  throw new ClawError('config', `channel ${o.channel}: type telegram is not served yet`);
}
