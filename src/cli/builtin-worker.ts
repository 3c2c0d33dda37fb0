// `claw __builtin`: the child side of an OS-touching builtin under `level: process` (see
// src/tools/builtins/impl.ts). Reads one WorkerRequest on stdin, writes one WorkerReply on stdout.
// Not a user command: it is how the runtime puts a builtin in its own sandboxed process.
import { BUILTINS } from '../tools/builtins/index.ts';
import { SandboxViolation } from '../tools/types.ts';
import { sandboxedFetch } from '../runtime/net-fetch.ts';
import type { WorkerReply, WorkerRequest } from '../tools/builtins/impl.ts';
import { encodeWorkerReply } from '../tools/builtins/worker-reply.ts';
import type { CliEnv } from './env.ts';

function readAll(env: CliEnv): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Uint8Array[] = [];
    env.stdin.on('data', (c) => chunks.push(typeof c === 'string' ? new TextEncoder().encode(c) : c));
    env.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

export async function builtinWorkerCommand(env: CliEnv): Promise<number> {
  let reply: WorkerReply;
  let req: WorkerRequest | undefined;
  try {
    req = JSON.parse(await readAll(env)) as WorkerRequest;
    const def = BUILTINS[req.name];
    if (!def || def.isShell) throw new Error(`no worker builtin named ${req.name}`);
    const result = await def.run(req.args, {
      signal: new AbortController().signal, // the parent kills this process group on timeout
      sandbox: req.sandbox,
      timeoutMs: req.timeoutMs,
      cwd: req.cwd,
      run: () => Promise.reject(new Error('a worker builtin starts no processes')),
      fetch: sandboxedFetch,
    });
    reply = { result };
  } catch (e) {
    reply = e instanceof SandboxViolation ? { violation: { rule: e.rule, detail: e.detail } } : { error: e instanceof Error ? e.message : String(e) };
  }
  env.stdout.write(encodeWorkerReply(reply, req?.sandbox));
  return 0;
}
