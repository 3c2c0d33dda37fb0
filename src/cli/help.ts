export const MAIN_HELP = `claw — a Claw Kernel Protocol (CKP) runtime for small boards and restricted hosts

Usage: claw <command> [options]

Commands:
  run [manifest]        run an agent, speaking CKP JSON-RPC on stdin/stdout (NDJSON)
  validate <file>       check a claw.yaml manifest or a single primitive document
  doctor                show which sandbox isolation layers this machine offers

Options:
  -h, --help            show help (also: claw <command> --help)
  --version             print the runtime version

Exit codes: 0 success, 1 invalid input or runtime failure, 2 usage error.
`;

export const RUN_HELP = `Usage: claw run [manifest] [--config FILE]

Loads and validates the manifest (YAML or JSON), then serves CKP JSON-RPC 2.0 over stdio: one
message per line on stdin, replies and notifications on stdout, logs as JSON lines on stderr.
Without a manifest, the agent is the manifest sent in claw.initialize.

Options:
  --config FILE   runtime configuration (default: claw.runtime.yaml beside the manifest, if any)
  --log-level L   debug | info | warn | error (default: info, or log.level in the configuration)

The process exits 0 when stdin closes; SIGTERM and SIGINT shut the agent down cleanly first.
`;

export const VALIDATE_HELP = `Usage: claw validate <file> [--json] [--config FILE]

Checks a root manifest (kind: Claw) with every reference it makes, or a single primitive document
(kind: Tool, Channel, ...). Prints every issue, one per line on stderr:
  file:line:col  json.path  message (spec §section)

Options:
  --json          print the result as JSON on stdout instead
  --config FILE   runtime configuration (for registries)

Exit codes: 0 valid, 1 invalid, 2 usage error.
`;
