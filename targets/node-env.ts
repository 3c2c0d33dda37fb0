// The host (src/runtime/host.ts) and the CLI environment built from `process`: the only place (with the entry
// points) that touches it. Bun runs the same code (targets/bun.ts).
// `fs.promises` is read on first use, not imported: one built-in fewer on the start path.
import { promises as fsp, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createFsReader } from '../src/node/fs-reader.ts';
import { systemClock } from '../src/node/clock.ts';
import type { CliEnv } from '../src/cli/env.ts';
import { main } from '../src/cli/main.ts';
import { createLogSink } from '../src/log/logger.ts';
import { Redactor } from '../src/log/redactor.ts';
import { whenFlushed } from '../src/node/when-flushed.ts';
import { logProcessWarnings } from '../src/node/json-warnings.ts';

declare const __CLAW_VERSION__: string;
declare const __CLAW_CHUNK_DIR__: string;

const redactor = new Redactor();

/** The stdio streams this process created (through the getters below), whose queues the exit waits for. */
const opened: { stdout?: NodeJS.WriteStream; stderr?: NodeJS.WriteStream } = {};

/** stderr as synchronous writes to fd 2; process.stderr only if fd 2 would block (see createLogSink). */
const stderr = createLogSink({ writeSync: (data) => writeSync(2, data) }, () => (opened.stderr = process.stderr));


export function processEnv(): CliEnv {
  return {
    argv: process.argv.slice(2),
    cwd: process.cwd(),
    env: process.env,
    // Getters: process.stdin and process.stdout load Node's stream and net modules when first read (2–4 ms),
    // which a command that never uses them need not pay for.
    get stdin() {
      return process.stdin;
    },
    get interactive() {
      return process.stdin.isTTY === true && process.stdout.isTTY === true;
    },
    get stdout() {
      return (opened.stdout = process.stdout);
    },
    stderr,
    reader: createFsReader(),
    clock: systemClock,
    readText: (p) => fsp.readFile(p, 'utf8'),
    onSignal: (sig, fn) => {
      process.on(sig, fn);
    },
    version: typeof __CLAW_VERSION__ === 'string' ? __CLAW_VERSION__ : '0.0.0-dev',
    redactor,
    self: process.argv[1] ? { argv0: process.execPath, args: [process.argv[1]], reads: chunkDir() } : undefined,
  };
}

/** The chunk directory beside the loader, in the shipped build (build.config.mjs defines its name). */
function chunkDir(): string[] {
  return typeof __CLAW_CHUNK_DIR__ === 'string' ? [fileURLToPath(new URL(`${__CLAW_CHUNK_DIR__}/`, import.meta.url))] : [];
}

/** Run the CLI and exit with its code once output has been handed to the OS. */
export async function runProcess(): Promise<void> {
  // Nothing may crash the runtime silently: log and keep the exit code honest.
  process.on('unhandledRejection', (reason) => {
    stderr.write(`${JSON.stringify({ ts: new Date().toISOString(), level: 'error', msg: 'unhandled rejection', error: redactor.redact(String((reason as Error)?.stack ?? reason)) })}\n`);
  });
  process.on('uncaughtException', (err) => {
    stderr.write(`${JSON.stringify({ ts: new Date().toISOString(), level: 'error', msg: 'uncaught exception', error: redactor.redact(String(err?.stack ?? err)) })}\n`);
    process.exitCode = 1;
  });
  logProcessWarnings(process, (line) => stderr.write(line), redactor);
  const code = await main(processEnv());
  process.exitCode = code;
  // Once stdout and stderr have handed every byte to the OS: if some handle still keeps the loop alive, exit
  // anyway shortly after.
  whenFlushed(
    () => [opened.stdout, opened.stderr],
    () => setTimeout(() => process.exit(code), 1000).unref(),
  );
}

