// A Level 2 agent for e2e tests: TV-L2-01's manifest with a vector's setup, in a temp directory
// with its own claw.runtime.yaml, started through dist/claw.mjs and initialized.
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { initParams, startClaw, type ClawRun } from './claw-process.ts';

export const IDENTITY = 'standard-agent';

/** TV-L2-01's manifest, with the pieces a vector's setup changes. */
export function manifest(o: { autonomy?: string; tools?: string; policies?: string; sandbox?: string; providerLimits?: string }): string {
  return `claw: "0.3.0"
kind: Claw
metadata:
  name: "${IDENTITY}"
  version: "1.0.0"
spec:
  identity:
    inline:
      personality: "You are a research assistant."
      autonomy: "${o.autonomy ?? 'autonomous'}"
  providers:
    - inline:
        protocol: "openai-compatible"
        endpoint: "https://api.example.com/v1"
        model: "gpt-4"
        auth:
          type: "bearer"
          secret_ref: "API_KEY"
${o.providerLimits ?? ''}
  channels:
    - inline:
        type: "cli"
        transport: "stdio"
        auth:
          secret_ref: "LOCAL_CLI_TOKEN"
  tools:
    - inline:
        name: "echo"
        description: "Returns the input text"
        input_schema:
          type: "object"
          properties:
            text: { type: "string" }
          required: ["text"]
${o.tools ?? ''}
  sandbox:
    inline:
${o.sandbox ?? '      level: "process"'}
  policies:
${o.policies ?? `    - inline:
        rules:
          - id: "allow-all"
            action: "allow"
            scope: "all"`}
`;
}

export const SHELL_TOOL = `    - inline:
        name: "shell"
        description: "Run a command"
        input_schema:
          type: "object"
          properties:
            command: { type: "string" }
          required: ["command"]`;

export interface Agent {
  claw: ClawRun;
  dir: string;
  call(name: string, args: unknown, requestId: string, id?: string | number): Promise<any>;
  close(): Promise<void>;
}

let seq = 0;
export async function agent(m: string, runtime = '', setup?: (dir: string) => void, wrap?: string[]): Promise<Agent> {
  const dir = mkdtempSync(join(tmpdir(), 'claw-l2-'));
  writeFileSync(join(dir, 'claw.yaml'), m);
  writeFileSync(join(dir, 'claw.runtime.yaml'), `data_dir: ./data\n${runtime}`);
  setup?.(dir);
  const claw = startClaw(['run', join(dir, 'claw.yaml')], { cwd: dir, wrap });
  const init = await claw.request('claw.initialize', initParams(), 'init').catch((e) => ({ error: String(e) }));
  if (!init.result) {
    claw.kill(); // never leave a child behind: it would keep the test runner alive
    assert.unreachable(`initialize failed: ${JSON.stringify(init.error)} ${claw.stderr().slice(-1500)}`);
  }
  return {
    claw,
    dir,
    call: (name, args, requestId, id = `req-${++seq}`) => claw.request('claw.tool.call', { name, arguments: args, context: { request_id: requestId, identity: IDENTITY } }, id),
    async close() {
      await claw.end();
      assert.equal(claw.garbage, [], 'stdout carries protocol messages only');
    },
  };
}


/** Processes whose command line contains `marker` (the tests' way to prove nothing survived). */
export function processesWith(marker: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.includes(marker) && !l.includes('ps -eo'));
}
