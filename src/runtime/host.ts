// What a runtime may take from the machine it runs on. targets/node-env.ts implements it once from
// `process` (Bun uses the same target); tests implement it with fakes. Nothing under src/ reads
// `process.env`, the working directory or the clock for a runtime except through this.
import type { SourceReader } from '../manifest/reader.ts';
import type { Clock } from '../kernel/ports.ts';
import type { Redactor } from '../log/redactor.ts';

export interface RuntimeHost {
  /** The working directory: relative paths on the command line resolve against it. */
  cwd: string;
  /**
   * The process environment: secrets by name (runtime profile §7, unless `secrets.env: false`),
   * $CLAW_SECRETS_DIR, HOME, and the allowlisted part tools get.
   */
  env: Record<string, string | undefined>;
  clock: Clock;
  /** Files the runtime reads (manifests, configuration, secret files), bounded and typed. */
  reader: SourceReader;
  readText(path: string): Promise<string>;
  /** Where logs and the `console` telemetry exporter write: stdout carries protocol only. */
  stderr: { write(s: string): unknown };
  onSignal(signal: 'SIGTERM' | 'SIGINT', fn: () => void): void;
  version: string;
  /** The process's redactor, so even crash reports never carry a resolved secret. */
  redactor?: Redactor;
  /**
   * How to start this runtime again (the builtin worker): interpreter and script, and what else the script reads
   * (the chunk directory beside the loader, docs/startup.md), which a sandboxed worker must be able to read.
   */
  self?: { argv0: string; args: string[]; reads?: string[] };
}
