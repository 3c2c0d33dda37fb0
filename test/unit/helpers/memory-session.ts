// A Level 3 session whose Memory declares a conversation and a semantic store, and temporary data directories
// removed by `removeTempDirs` (a suite's test.after), for the memory module's unit suites.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Session } from '../../../src/kernel/agent.ts';
import { makeManifest, primitive } from './fakes.ts';

export function tempDirs(prefix: string): { tmp: () => string; removeTempDirs: () => void } {
  const dirs: string[] = [];
  return {
    tmp: () => {
      const d = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
    removeTempDirs: () => {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}

export function memorySession(): Session {
  const stores = [
    { name: 'context', type: 'conversation' },
    { name: 'facts', type: 'semantic' },
  ];
  return { manifest: makeManifest(3, { memory: primitive('Memory', 'mem', { stores }) }), protocolVersion: '0.3.0', level: 3, capabilities: {}, abort: new AbortController() } as Session;
}
