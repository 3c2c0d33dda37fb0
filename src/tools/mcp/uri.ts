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
// Not supported:
//   https:// (and http://)  MCP Streamable HTTP: out of scope for now → 'unsupported-transport'.
//   mcp://                  RESERVED by spec §5.4 ("MUST NOT be used") → rejected as 'config'.

export interface McpStdioTarget {
  transport: 'stdio';
  /** Absolute path of the executable. */
  command: string;
  /** Arguments after the executable (argv[1..]). */
  args: string[];
  /** The URI as written in the manifest (for messages). */
  uri: string;
}

export type McpUriResult =
  | { ok: true; target: McpStdioTarget }
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
  if (scheme === 'https' || scheme === 'http') {
    return fail(
      'unsupported-transport',
      `mcp_source.uri "${uri}": the MCP Streamable HTTP transport (${scheme}://) is not supported by claw-edge yet; only stdio:/// servers can be used`,
    );
  }
  if (scheme !== 'stdio') {
    return fail('unsupported-transport', `mcp_source.uri "${uri}": unknown MCP transport "${scheme}:"; only stdio:/// is supported`);
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
