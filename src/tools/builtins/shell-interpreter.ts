// Which programs are a command string in disguise (spec §5.8 `shell.mode`: restricted runs argv-style calls
// only; a command string needs `full`). `{ bin: "/bin/sh", argv: ["-c", "<anything>"] }` is exactly the
// command string restricted mode refuses, and so is any interpreter given code (python -c, perl -e, node -e,
// awk 'BEGIN{system(…)}'), a multi-call binary (busybox sh), or a program whose job is to run another one
// (env, nice, timeout, xargs, sudo …: `env sh -c …`). interpreterOf names the one found, looking at:
//   - the name as given and, for a bare name, the file PATH finds; each resolved through symlinks (on many
//     systems /bin/sh is dash or busybox under another name);
//   - versioned names, by dropping a trailing version: python3.11, perl5.36, lua5.4, php8.2, pypy3;
//   - a script's `#!` line (its interpreter runs it), `#!/usr/bin/env python3` included.
// This is a list, so it is a tripwire too: programs that can run commands as a side line (find -exec,
// git aliases, tar --to-command, sed's `e`) are not on it. Exec bindings (docs/tools.md) confine a tool to
// one program by construction; this only keeps restricted mode from being `full` under another spelling.
import { openSync, readSync, closeSync, realpathSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { STD_DIRS } from '../../sandbox/host.ts';

const SHELLS = 'sh bash dash zsh ksh mksh pdksh oksh loksh ash yash csh tcsh fish rc es elvish nu xonsh pwsh powershell busybox toybox';
const INTERPRETERS =
  'python pypy jython ipython perl ruby irb jruby node nodejs bun deno php lua luajit awk gawk mawk nawk busybox-awk tclsh wish expect guile racket rscript r julia jshell jrunscript osascript ghci runghc sbcl clisp ecl gdb make gmake dc vi vim nvim ex emacs';
const RUNNERS =
  'env nice ionice timeout nohup stdbuf setsid xargs parallel sudo doas su runuser sg newgrp chroot taskset chrt nsenter unshare flock script watch time strace ltrace setpriv capsh fakeroot proot firejail bwrap systemd-run start-stop-daemon daemonize chpst unbuffer prlimit numactl cgexec valgrind catchsegv exec command builtin eval pkexec socat tmux screen rlwrap dtach';

// The dynamic loader runs any program given as its argument (`ld-linux-x86-64.so.2 /bin/sh -c …`), and
// realpath keeps its own name; `programName` has already dropped the version (`ld-linux-x86-64.so`).
const DYNAMIC_LOADER = /^ld(?:-linux|-musl|-uclibc|-\d)[\w.-]*$|^ld\.so$/;
const ELF = '\x7fELF';

const NAMES = new Set(`${SHELLS} ${INTERPRETERS} ${RUNNERS}`.split(' '));

/** `python3.11` → `python`, `perl5.36.0` → `perl`, `lua-5.4` → `lua`, `Rscript` → `rscript`. */
export function programName(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  return base.replace(/\.exe$/, '').replace(/[-_.]?\d[\d.]*[a-z]?$/, '');
}

export interface ProgramIo {
  /** Directories a bare name is looked up in. */
  pathDirs: string[];
  /** The file's real path (symlinks resolved), or undefined when it is not an existing file. */
  realpath(p: string): string | undefined;
  /** The first bytes of a file, as latin1, or undefined. */
  head(p: string): string | undefined;
}

export const nodeProgramIo = (env: NodeJS.ProcessEnv = process.env): ProgramIo => ({
  // The directories the launcher's lookup (whichSync) searches, in its order: PATH, then the standard ones.
  pathDirs: [...(env.PATH || '/usr/local/bin:/usr/bin:/bin').split(':').filter((d) => d.startsWith('/')), ...STD_DIRS],
  realpath(p) {
    try {
      return statSync(p).isFile() ? realpathSync(p) : undefined;
    } catch {
      return undefined;
    }
  },
  head(p) {
    let fd: number | undefined;
    try {
      fd = openSync(p, 'r');
      const buf = Buffer.alloc(256);
      const n = readSync(fd, buf, 0, buf.length, 0);
      return buf.subarray(0, n).toString('latin1');
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  },
});

/** The interpreter or command runner `bin` amounts to, or undefined for an ordinary program. */
export function interpreterOf(bin: string, cwd: string, io: ProgramIo): string | undefined {
  const seen = new Set<string>();
  const check = (p: string, depth: number): string | undefined => {
    if (seen.has(p) || depth > 4) return undefined;
    seen.add(p);
    const name = programName(p);
    if (NAMES.has(name)) return name;
    let file: string | undefined;
    if (p.includes('/')) file = io.realpath(posix.resolve(cwd, p));
    else for (const d of io.pathDirs) if ((file = io.realpath(`${d}/${p}`))) break;
    if (!file) return undefined;
    const real = programName(file);
    if (NAMES.has(real)) return real;
    if (DYNAMIC_LOADER.test(real) || DYNAMIC_LOADER.test(name)) return 'ld.so';
    const head = io.head(file);
    if (head === undefined) return undefined;
    if (head.startsWith('#!')) {
      const [interp, ...rest] = head.slice(2).split('\n')[0].trim().split(/\s+/);
      const found = interp ? check(interp, depth + 1) : undefined;
      // `#!/usr/bin/env python3`: env is a runner anyway, but name what it runs when we can.
      const target = found === 'env' ? rest.find((a) => !a.startsWith('-') && !a.includes('=')) : undefined;
      return target ? programName(target) : found;
    }
    // Neither a program nor a #! script: execve() fails with ENOEXEC and execvp() — in libuv, sh's `exec`,
    // prlimit, bubblewrap — hands the file to /bin/sh. A text file the agent wrote is a shell script.
    return head.startsWith(ELF) ? undefined : 'sh';
  };
  return check(bin, 0);
}
