// The memory module on a temp data directory (journalled sql.js), driven through its method handlers as the
// router would call them: each call's result, or the ProtocolError it threw, and how long it took.
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryModule } from '../../../src/runtime/memory-module.ts';
import { ProtocolError } from '../../../src/protocol/errors.ts';
import type { Session } from '../../../src/kernel/agent.ts';
import { captureLogger, makeManifest, primitive } from './fakes.ts';

export interface Reply {
  result?: any;
  error?: ProtocolError;
  ms: number;
}

export interface MemoryHarness {
  dataDir: string;
  call(method: string, params: unknown): Promise<Reply>;
  /** Stop the module (closes the database); `reopen()` starts a new one on the same data directory. */
  stop(): Promise<void>;
  reopen(): Promise<void>;
  /** Stop and remove the data directory. */
  dispose(): Promise<void>;
}

/** `memory`: claw.runtime.yaml's `memory` section (default: the journalled sql.js adapter). */
export async function memoryHarness(
  stores: Record<string, unknown>[],
  o: { dataDir?: string; memory?: Record<string, unknown> } = {},
): Promise<MemoryHarness> {
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), 'claw-mem-h-'));
  let mod: ReturnType<typeof memoryModule> | undefined;
  const start = async () => {
    const session: Session = {
      manifest: makeManifest(3, { memory: primitive('Memory', 'mem', { stores }) }),
      protocolVersion: '0.3.0',
      level: 3,
      capabilities: {},
      abort: new AbortController(),
    };
    mod = memoryModule({ config: { memory: o.memory ?? { adapter: 'sqljs' } } as any, log: captureLogger(), dataDir });
    await mod.start!(session, {} as any);
  };
  await start();
  const stop = async () => {
    await mod?.stop!({} as never);
    mod = undefined;
  };
  return {
    dataDir,
    async call(method, params) {
      const t = performance.now();
      try {
        const result = await mod!.methods![method].handler(params, { transport: 'test' } as any, {} as any);
        return { result, ms: performance.now() - t };
      } catch (e) {
        assert.ok(e instanceof ProtocolError, `${method} threw a non-protocol error: ${String(e)}`);
        return { error: e as ProtocolError, ms: performance.now() - t };
      }
    },
    stop,
    reopen: async () => {
      await stop();
      await start();
    },
    async dispose() {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
