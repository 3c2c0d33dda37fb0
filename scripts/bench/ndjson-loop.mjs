// The NDJSON JSON-RPC stdio plumbing of the bare baseline processes (scripts/bench/bare.mjs,
// scripts/bench-tools/bare-spawn.mjs, scripts/bench-tools/bare-mcp.mjs), written once. It is the
// plain, idiomatic code each of them ran inline before: a utf8 stream, split on "\n", JSON.parse,
// one process.stdout.write per reply. Neither slowed down nor micro-optimised; do not change it
// without re-baselining (the benches compare claw against exactly this). node: built-ins only.

/** One JSON-RPC result line on stdout. */
export function reply(id, result) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`);
}

/** One JSON-RPC error line (-32603, internal error) on stdout. */
export function fail(id, message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message } })}\n`);
}

/**
 * The bare.mjs / bare-spawn.mjs loop: read stdin as utf8, split on "\n" (a trailing "\r" dropped,
 * blank lines skipped, an unterminated last line handled at EOF), JSON.parse each line (a parse
 * error is answered with -32700 and id null), and call onRequest(msg) for every request (an object
 * with an id; notifications and responses get no reply).
 */
export function serveRequests(onRequest) {
  let buf = '';
  function handle(line) {
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.trim() === '') return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${e.message}` } })}\n`);
      return;
    }
    if (msg === null || typeof msg !== 'object' || msg.id === undefined) return; // notification / response: no reply
    onRequest(msg);
  }
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buf += chunk;
    let start = 0;
    let nl;
    while ((nl = buf.indexOf('\n', start)) !== -1) {
      handle(buf.slice(start, nl));
      start = nl + 1;
    }
    buf = start === 0 ? buf : buf.slice(start);
  });
  process.stdin.on('end', () => {
    if (buf !== '') handle(buf);
    buf = '';
  });
}

/**
 * The bare-mcp.mjs loop (its stdin and its MCP server's stdout): read `stream` as utf8, take each
 * complete "\n"-terminated line off the front of the buffer, skip blank ones, call onLine(line).
 * An unterminated last line is dropped. Kept as bare-mcp.mjs has always done it (it is not the
 * serveRequests loop) so its baseline does not move.
 */
export function eachLine(stream, onLine) {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) !== -1) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      onLine(line);
    }
  });
}
