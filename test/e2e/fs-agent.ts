// A Level 2 agent serving a filesystem transport, for the fs e2e and crash tests: a `count` exec tool
// appends its tag to count.log, so executions can be counted from outside.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { CLAW, initParams } from './helpers/claw-process.ts';

export const AGENT = 'counter';
export const TOKEN_ENV = { CLI_TOKEN: 'cli-token-value' };

export const MANIFEST = `claw: "0.3.0"
kind: Claw
metadata:
  name: "${AGENT}"
  version: "1.0.0"
spec:
  identity:
    inline:
      personality: "Counts."
      autonomy: "autonomous"
  providers:
    - inline:
        protocol: "openai-compatible"
        endpoint: "http://localhost:11434/v1"
        model: "llama3"
        auth: { type: "none" }
  channels:
    - inline:
        type: "cli"
        transport: "stdio"
        auth: { secret_ref: "CLI_TOKEN" }
  tools:
    - inline:
        name: "count"
        description: "Appends its tag to count.log"
        input_schema:
          type: "object"
          properties:
            tag: { type: "string" }
          required: ["tag"]
  sandbox:
    inline:
      level: "process"
  policies:
    - inline:
        rules:
          - id: "allow-all"
            action: "allow"
            scope: "all"
`;

/** A directory with claw.yaml and a claw.runtime.yaml; `extra` is appended to the runtime config. */
export function agentDir(extra = ''): string {
  const dir = mkdtempSync(join(tmpdir(), 'claw-fs-e2e-'));
  writeFileSync(join(dir, 'claw.yaml'), MANIFEST);
  writeFileSync(
    join(dir, 'claw.runtime.yaml'),
    `data_dir: ./data
tools:
  count:
    exec: { bin: /bin/sh, argv: ["-c", "echo \\"$0\\" >> ${dir}/count.log; echo counted $0", "{{tag}}"] }
${extra}`,
  );
  return dir;
}

/** `claw run` as a daemon: stdin is /dev/null (EOF at once), stdout and stderr collected. */
export function daemon(dir: string, args: string[] = []): { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [CLAW, 'run', join(dir, 'claw.yaml'), ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ...TOKEN_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (c: string) => (err += c));
  child.stdout!.resume();
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, stderr: () => err, exited };
}

export const initialize = () => initParams();
export const countCall = (tag: string) => ({ name: 'count', arguments: { tag }, context: { request_id: tag, identity: AGENT } });
