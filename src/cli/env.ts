// What a CLI command may touch. targets/ build it from `process`; tests build it from fakes.
import type { ByteSource, TextSink } from '../transports/stdio.ts';
import type { SourceReader } from '../manifest/reader.ts';
import type { Clock } from '../kernel/ports.ts';
import type { Redactor } from '../log/redactor.ts';

export interface CliEnv {
  argv: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  stdin: ByteSource;
  stdout: TextSink;
  stderr: { write(s: string): unknown };
  reader: SourceReader;
  clock: Clock;
  readText(path: string): Promise<string>;
  onSignal(signal: 'SIGTERM' | 'SIGINT', fn: () => void): void;
  version: string;
  /** The process's redactor, so even crash reports never carry a resolved secret. */
  redactor?: Redactor;
  /** stdin and stdout are a terminal (`claw chat` prompts only then). */
  interactive?: boolean;
  /**
   * How to start this runtime again (the builtin worker): interpreter and script, and what else the script reads
   * (the chunk directory beside the loader, docs/startup.md), which a sandboxed worker must be able to read.
   */
  self?: { argv0: string; args: string[]; reads?: string[] };
}
