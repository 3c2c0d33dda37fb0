// What a CLI command may touch: the runtime host (src/runtime/host.ts) plus its arguments and the
// stdio streams. targets/ build it from `process`; tests build it from fakes.
import type { ByteSource, TextSink } from '../transports/stdio.ts';
import type { RuntimeHost } from '../runtime/host.ts';

export interface CliEnv extends RuntimeHost {
  argv: string[];
  stdin: ByteSource;
  stdout: TextSink;
  /** stdin and stdout are a terminal (`claw chat` prompts only then). */
  interactive?: boolean;
}
