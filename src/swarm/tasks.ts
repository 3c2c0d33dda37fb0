// The delegating agent's record of each task it delegated, and the dead-letter queue (spec §5.10
// failure.dead_letter): what claw.swarm.result answers. Bounded: the oldest finished records go
// first when the cap is reached.
import type { PeerReport } from './aggregate.ts';
import type { DelegateParams } from './wire.ts';
import { timerDelay } from '../protocol/delay.ts';

export type TaskState = 'running' | 'completed' | 'partial' | 'failed' | 'dead-letter';

export interface TaskRecord {
  task_id: string;
  swarm: string;
  state: TaskState;
  topology: string;
  strategy: string;
  /** Peers asked, in the order they were asked (retries repeat a name). */
  asked: string[];
  attempts: number;
  reports: PeerReport[];
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
  created_at: string;
  finished_at?: string;
  /** The delegation as received: kept for the dead-letter queue (an operator can re-send it). */
  delegate: DelegateParams;
}

export const MAX_TASK_RECORDS = 1000;

export class TaskStore {
  private readonly records = new Map<string, TaskRecord>();
  private readonly waiters = new Map<string, (() => void)[]>();

  get(id: string): TaskRecord | undefined {
    return this.records.get(id);
  }

  add(rec: TaskRecord): void {
    if (this.records.size >= MAX_TASK_RECORDS) {
      for (const [id, r] of this.records) {
        if (r.state !== 'running' && r.state !== 'dead-letter') {
          this.records.delete(id);
          break;
        }
      }
    }
    this.records.set(rec.task_id, rec);
  }

  finish(rec: TaskRecord, now: string): void {
    rec.finished_at = now;
    for (const w of this.waiters.get(rec.task_id) ?? []) w();
    this.waiters.delete(rec.task_id);
  }

  deadLetters(): TaskRecord[] {
    return [...this.records.values()].filter((r) => r.state === 'dead-letter');
  }

  /** Resolves when the task leaves 'running' or after ms, whichever is first. */
  wait(id: string, ms: number): Promise<void> {
    const r = this.records.get(id);
    if (!r || r.state !== 'running' || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, timerDelay(ms));
      const list = this.waiters.get(id) ?? [];
      list.push(() => {
        clearTimeout(t);
        resolve();
      });
      this.waiters.set(id, list);
    });
  }
}

/** What claw.swarm.result returns: the record without the internal copy of the delegation. */
export function view(r: TaskRecord): Omit<TaskRecord, 'delegate'> & { task: DelegateParams['task'] } {
  const { delegate, ...rest } = r;
  return { ...rest, task: delegate.task };
}
