// Where the A2A routes may live on an HTTP listener (docs/a2a.md "Turning it on"): the JSON-RPC endpoint at
// `a2a.path` and the HTTP+JSON binding below it must not shadow, or be shadowed by, the CKP endpoint, /healthz or
// the agent card under /.well-known/. Checked when claw.runtime.yaml loads and again per listener (`--listen`).

/** The CKP endpoint's path in an http(s) listen URL, as the transport reads it (transports/http/settings.ts). */
export function ckpPathOf(listen: string): string | undefined {
  let u: URL;
  try {
    u = new URL(listen);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  return u.pathname === '' || u.pathname === '/' ? '/ckp' : u.pathname.replace(/\/+$/, '');
}

/** `a` is `b` or a path below it, segment-wise. */
const within = (a: string, b: string): boolean => a === b || a.startsWith(b.endsWith('/') ? b : `${b}/`);

/** Why `a2aPath` cannot serve A2A beside the CKP endpoints `ckpPaths` (name → path), or undefined. */
export function a2aPathConflict(a2aPath: string, ckpPaths: readonly { name: string; path: string }[]): string | undefined {
  const p = a2aPath.replace(/\/+$/, '');
  if (p === '') return `a2a.path "${a2aPath}" would take every path of the listener (its CKP endpoint, /healthz, /.well-known/): choose a path such as /a2a`;
  if (p.split('/').slice(1).some((seg) => seg === '' || seg === '.' || seg === '..')) return `a2a.path "${a2aPath}" has an empty, "." or ".." segment: write it plainly, such as /a2a`;
  const taken = [
    ...ckpPaths.map((c) => ({ what: `the CKP endpoint "${c.path}" of ${c.name}`, path: c.path })),
    { what: 'the health probe "/healthz"', path: '/healthz' },
    { what: 'the agent card under "/.well-known/"', path: '/.well-known' },
  ];
  for (const t of taken) {
    if (within(p, t.path) || within(t.path, p)) return `a2a.path "${a2aPath}" collides with ${t.what}: the two would share requests; choose another a2a.path`;
  }
  return undefined;
}
