// The builtin worker command (src/tools/builtins/impl.ts): how to start this runtime again, from the host's
// `self`. `binds` is resolved on first read: two realpathSync calls (each an lstat per path component) that
// only a builtin run in a worker needs, not every start (docs/startup.md).
import { realpathSync } from 'node:fs';
import type { WorkerCommand } from '../tools/builtins/impl.ts';
import type { RuntimeHost } from './host.ts';

export function workerCommand(self: NonNullable<RuntimeHost['self']>): WorkerCommand {
  let binds: string[] | undefined;
  return {
    argv0: self.argv0,
    args: self.args,
    get binds() {
      return (binds ??= selfBinds(self));
    },
  };
}

/** The interpreter, the bundle and what it reads, by their real paths: a builtin worker must be able to read them. */
function selfBinds(self: NonNullable<RuntimeHost['self']>): string[] {
  return [self.argv0, ...self.args, ...(self.reads ?? [])].map((p) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  });
}
