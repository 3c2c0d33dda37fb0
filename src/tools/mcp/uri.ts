// mcp_source.uri → how to reach the MCP server (spec §5.4 "MCP Compatibility").
//
// Supported:
//   stdio:///abs/path/to/server                  run /abs/path/to/server with no arguments
//   stdio:///usr/bin/node?arg=/srv/mcp/index.js&arg=--root&arg=/data
//                                                run /usr/bin/node /srv/mcp/index.js --root /data
//
// Rules for stdio URIs (our choice; the spec only shows `stdio:///path`):
// - Exactly three slashes: no authority, the path is absolute. Percent-encoding is decoded in the
//   path and in argument values (%20 for a space, %26 for '&', %3D for '=', %25 for '%').
//   '+' is a literal plus, not a space (arguments like `--level=a+b` pass through unchanged).
// - Arguments come from repeated `arg=` query parameters, in order. `arg=` gives an empty argument.
//   Any other query key is rejected (a typo like `args=` must not be silently ignored). No fragment.
// - The path is executed directly (no shell, no PATH lookup). Scripts with a shebang work when the
//   interpreter is reachable from the server's environment; otherwise name the interpreter as the
//   path and the script as the first `arg` (the usual form for npm servers: node .../dist/index.js).
// - Environment variables and the working directory are not part of the URI: the manifest is
//   portable and must not carry secrets; they come from the runtime (McpPool options / sandbox).
//
//   https://host[:port]/path                     MCP Streamable HTTP: the server's MCP endpoint
//   http://127.0.0.1:port/path                   the same, plain HTTP: only to a loopback address
//                                                and only when claw.runtime.yaml allows it for this
//                                                server (mcp.servers.<uri>.allow_loopback: true)
//
// Rules for HTTP URIs: no credentials in the URI (user:pass@ is refused: the manifest is portable
// and must not carry secrets; tokens come from claw.runtime.yaml by secret_ref), no fragment.
// `localhost` is not a loopback literal here: name the address (127.0.0.1, [::1]).
//
// Not supported:
//   mcp://                  RESERVED by spec §5.4 ("MUST NOT be used") → rejected as 'config'.
//   anything else           → 'unsupported-transport'.

export interface McpStdioTarget {
  transport: 'stdio';
  /** Absolute path of the executable. */
  command: string;
  /** Arguments after the executable (argv[1..]). */
  args: string[];
  /** The URI as written in the manifest (for messages). */
  uri: string;
}

export interface McpHttpTarget {
  transport: 'http';
  /** The endpoint URL, normalized by the WHATWG URL parser. */
  url: string;
  /** false for http:// (loopback only, see httpTargetProblem). */
  secure: boolean;
  /** The URI as written in the manifest (for messages). */
  uri: string;
}

export type McpTarget = McpStdioTarget | McpHttpTarget;

export type McpUriResult =
  | { ok: true; target: McpTarget }
  | { ok: false; reason: 'reserved' | 'unsupported-transport' | 'invalid'; message: string };

const fail = (reason: 'reserved' | 'unsupported-transport' | 'invalid', message: string): McpUriResult => ({ ok: false, reason, message });

function decode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

export function parseMcpUri(uri: string): McpUriResult {
  if (typeof uri !== 'string' || uri.length === 0) return fail('invalid', 'mcp_source.uri must be a non-empty string');
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(uri)?.[1]?.toLowerCase();
  if (scheme === undefined) return fail('invalid', `mcp_source.uri "${uri}" has no scheme; use stdio:///absolute/path/to/server`);
  if (scheme === 'mcp') {
    return fail('reserved', `mcp_source.uri "${uri}": the mcp:// URI scheme is reserved by the spec (§5.4) and must not be used; use stdio:///absolute/path/to/server`);
  }
  if (scheme === 'https' || scheme === 'http') return parseHttpUri(uri, scheme);
  if (scheme !== 'stdio') {
    return fail('unsupported-transport', `mcp_source.uri "${uri}": unknown MCP transport "${scheme}:"; use stdio:/// or https://`);
  }
  const m = /^stdio:\/\/\/([^?#]*)(?:\?([^#]*))?$/i.exec(uri);
  if (!m) {
    if (uri.includes('#')) return fail('invalid', `mcp_source.uri "${uri}": a stdio URI cannot have a fragment (#...)`);
    return fail('invalid', `mcp_source.uri "${uri}": a stdio URI must be stdio:///absolute/path (three slashes, no host)`);
  }
  const path = decode(`/${m[1]}`);
  if (path === undefined) return fail('invalid', `mcp_source.uri "${uri}": malformed percent-encoding in the path`);
  if (path === '/' || path.endsWith('/')) return fail('invalid', `mcp_source.uri "${uri}": the path must name an executable file`);
  if (path.includes('\0')) return fail('invalid', `mcp_source.uri "${uri}": the path contains a NUL byte`);
  const args: string[] = [];
  if (m[2] !== undefined && m[2] !== '') {
    for (const part of m[2].split('&')) {
      const eq = part.indexOf('=');
      const key = eq === -1 ? part : part.slice(0, eq);
      if (key !== 'arg' || eq === -1) {
        return fail('invalid', `mcp_source.uri "${uri}": unsupported query parameter "${part}"; server arguments are given as repeated arg=<value>`);
      }
      const value = decode(part.slice(eq + 1));
      if (value === undefined) return fail('invalid', `mcp_source.uri "${uri}": malformed percent-encoding in "${part}"`);
      if (value.includes('\0')) return fail('invalid', `mcp_source.uri "${uri}": an argument contains a NUL byte`);
      args.push(value);
    }
  }
  return { ok: true, target: { transport: 'stdio', command: path, args, uri } };
}

/** Build a stdio URI from a command and its arguments (the inverse of parseMcpUri). */
export function formatStdioUri(command: string, args: readonly string[] = []): string {
  if (!command.startsWith('/')) throw new Error(`stdio MCP server path must be absolute: ${command}`);
  const path = command.split('/').map(encodeURIComponent).join('/');
  const query = args.map((a) => `arg=${encodeURIComponent(a)}`).join('&');
  return `stdio://${path}${query ? `?${query}` : ''}`;
}

function parseHttpUri(uri: string, scheme: 'http' | 'https'): McpUriResult {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return fail('invalid', `mcp_source.uri "${uri}" is not a valid URL`);
  }
  if (u.hostname === '') return fail('invalid', `mcp_source.uri "${uri}" has no host`);
  if (u.username || u.password) {
    return fail('invalid', `mcp_source.uri "${uri}": credentials do not belong in the manifest; give them in claw.runtime.yaml (mcp.servers.<uri>.bearer_secret_ref)`);
  }
  if (u.hash || uri.includes('#')) return fail('invalid', `mcp_source.uri "${uri}": an MCP endpoint URL cannot have a fragment (#...)`);
  return { ok: true, target: { transport: 'http', url: u.href, secure: scheme === 'https', uri } };
}

/** 127.0.0.0/8 and ::1 written as literals (no name: a name is resolved, and may resolve elsewhere). */
export function isLoopbackLiteral(hostname: string): boolean {
  const h = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::1';
}

/**
 * Why this HTTP target may not be used, or undefined. Plain http:// only to a loopback literal, and
 * only when the runtime configuration allows loopback for this server (docs/tools.md "MCP over HTTP").
 */
export function httpTargetProblem(t: McpHttpTarget, allowLoopback: boolean): string | undefined {
  if (t.secure) return undefined;
  const host = new URL(t.url).hostname;
  if (!isLoopbackLiteral(host)) {
    return `mcp_source.uri "${t.uri}": plain http:// is only allowed to a loopback address (127.0.0.1, [::1]); use https://`;
  }
  if (!allowLoopback) {
    return `mcp_source.uri "${t.uri}": plain http:// to a loopback server needs mcp.servers["${t.uri}"].allow_loopback: true in claw.runtime.yaml`;
  }
  return undefined;
}
