// The unix sockets bound to a path on this host, for `network: deny` under bubblewrap (spec §5.8
// capabilities.network). A network namespace separates addresses, ports and abstract sockets (`\0name`),
// but a socket bound to a path is reached through the filesystem: with the host's `/` shown read-only
// (or writable, or a mount_path around it), a tool in its loopback-only namespace could still connect
// to D-Bus, the docker or systemd sockets, an X server or any local service — as root, systemd's
// private socket starts any unit. bwrap-args.ts covers each one the tool would see with /dev/null.
//
// /proc/net/unix lists the sockets of the reader's network namespace, i.e. the host services the
// runtime shares it with; one line per socket, the path (if any) from the 8th field to the end of the
// line (it may hold spaces). `@` starts an abstract name: nothing on the filesystem, and the tool's own
// namespace has its own. A socket bound after the launch is not covered (as with denied_paths).
import { lstat, readFile, realpath } from 'node:fs/promises';

/**
 * Real paths of the path-bound unix sockets of `table` (the text of /proc/net/unix) that are sockets now.
 * A socket bound by a relative name is listed as bound, without its directory: it cannot be found.
 */
export async function boundSocketPaths(table?: string): Promise<string[]> {
  const text = table ?? (await readFile('/proc/net/unix', 'latin1').catch(() => ''));
  const paths = new Set<string>();
  for (const line of text.split('\n').slice(1)) {
    const m = /^\s*\S+:\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+ (\/.*)$/.exec(line);
    if (m) paths.add(m[1]);
  }
  const out: string[] = [];
  for (const p of paths) {
    // Only a socket is covered: a crafted name in the table must not mask (or create) anything else.
    if (!(await lstat(p).then((s) => s.isSocket(), () => false))) continue;
    const r = await realpath(p).catch(() => undefined); // /var/run/x.sock is /run/x.sock where binds see it
    if (r) out.push(r);
  }
  return out.sort();
}
