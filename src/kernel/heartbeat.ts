// claw.heartbeat (spec §9.3.1): a notification every interval while READY, the first one after one
// full interval, none before initialize completes or after STOPPING begins.
import { notification, type JsonRpcNotification } from '../protocol/jsonrpc.ts';
import type { Clock } from './ports.ts';
import type { LifecycleState } from './lifecycle.ts';
import { timerDelay } from '../protocol/delay.ts';

export const DEFAULT_HEARTBEAT_MS = 30_000;

export class Heartbeat {
  private timer: { cancel(): void } | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly snapshot: () => { state: LifecycleState; uptime_ms: number },
    private readonly emit: (n: JsonRpcNotification) => void,
  ) {}

  start(intervalMs: number): void {
    this.stop();
    this.timer = this.clock.setInterval(() => {
      const s = this.snapshot();
      if (s.state !== 'READY') return; // belt and braces: never beat outside READY
      this.emit(notification('claw.heartbeat', { ...s, timestamp: new Date(this.clock.now()).toISOString() }));
    }, timerDelay(intervalMs));
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }
}
