export const MAIN_HELP = `claw — a Claw Kernel Protocol (CKP) runtime for small boards and restricted hosts

Usage: claw <command> [options]

Commands:
  chat <manifest>       talk to the agent (the implicit CLI channel): model, tools, memory
  eval <manifest> <scenarios>
                        measure the agent's model on scenarios: success, calls, corrections, tokens
  run [manifest]        run an agent, speaking CKP JSON-RPC on stdin/stdout (NDJSON)
  validate <file>       check a claw.yaml manifest or a single primitive document
  doctor                show which sandbox isolation layers this machine offers
  protocol check        check a model output (stdin) against the FemtoClaw protocol
  audit verify <file>   verify an audit log's hash chain
  send <uri> <method> [params-json]
                        send one JSON-RPC request to an agent listening on fs:/dir, mqtt:// or http(s)://
  pair <manifest> <code>
                        approve a channel user's pairing code (--list: pending codes)
  a2a card|send <url> [text]
                        read a remote A2A agent's card, or send it a message and wait for the reply

Options:
  -h, --help            show help (also: claw <command> --help)
  --version             print the runtime version

Exit codes: 0 success, 1 invalid input or runtime failure, 2 usage error.
`;

export const EVAL_HELP = `Usage: claw eval <manifest> <scenarios.yaml> [--json] [--model M] [--endpoint URL]
                 [--mode auto|native|json_schema|prompt] [--config FILE] [--log-level L]

Runs each scenario (a user message and what should come of it: a tool call with arguments, a message
without a tool, or a call the policy refuses) as a fresh conversation through this manifest's agent —
its providers, output modes, FemtoClaw validation and gates — and prints, per scenario and in total,
success, model calls, corrections, tokens and latency, as a table or (--json) as JSON. Tools really
run; approvals are denied unless a scenario says approve: true. --model, --endpoint and --mode
override the first Provider, to compare models or modes without editing the manifest.
Scenarios file: examples/eval/home-scenarios.yaml; docs/agent.md "Measuring a model".
`;

export const CHAT_HELP = `Usage: claw chat <manifest> [--config FILE] [--user ID] [--log-level L]

Runs the agent in this process and talks to it: each line is a message; the agent answers through
its providers (falling back in order, down to an offline rules provider), acting only through
validated, authorized tool calls. On a terminal it prompts ("> "); piped, stdout carries exactly one
reply line per message. A tool call that needs approval asks here: the next line answers
(y or yes approves, anything else denies). /quit or end of input leaves.

Options:
  --config FILE   runtime configuration (default: claw.runtime.yaml beside the manifest, if any)
  --user ID       the channel user (default: $USER); a cli Channel's access_control applies to it
  --log-level L   debug | info | warn | error (default: error)
`;

export const RUN_HELP = `Usage: claw run [manifest] [--config FILE] [--listen URI]...

Loads and validates the manifest (YAML or JSON), then serves CKP JSON-RPC 2.0 over stdio: one
message per line on stdin, replies and notifications on stdout, logs as JSON lines on stderr.
Without a manifest, the agent is the manifest sent in claw.initialize.

Options:
  --config FILE   runtime configuration (default: claw.runtime.yaml beside the manifest, if any)
  --log-level L   debug | info | warn | error (default: info, or log.level in the configuration)
  --listen URI    also serve this transport, e.g. fs:/var/lib/claw/ipc, mqtt://broker/claw or
                  http://127.0.0.1:8080/ckp (repeatable; see also
                  transports: in claw.runtime.yaml and docs/transports.md)
  --start         start the session now with the manifest, without waiting for claw.initialize
                  (a daemon serving queue channels or swarm peers; a later claw.initialize is refused
                  until claw.shutdown ends this session)

The process exits 0 when stdin closes; SIGTERM and SIGINT shut the agent down cleanly first.
With other transports listening, stdin closing does not stop it (a daemon may run with
stdin=/dev/null): it runs until a signal, or until every other transport has closed.
`;

export const VALIDATE_HELP = `Usage: claw validate <file> [--json] [--config FILE] [--strict]

Checks a root manifest (kind: Claw) with every reference it makes, or a single primitive document
(kind: Tool, Channel, ...). Prints every issue, one per line on stderr:
  file:line:col  json.path  message (spec §section)

Options:
  --json          print the result as JSON on stdout instead
  --config FILE   runtime configuration: checked first, and its registries resolve claw:// references
  --strict        exit 3 when the manifest is valid but has warnings: channels (types, transports,
                  features) this runtime does not serve and would refuse at STARTING

Exit codes: 0 valid, 1 invalid, 2 usage error, 3 valid with warnings (--strict only).
`;

export const PAIR_HELP = `Usage: claw pair <manifest> <code> [--channel NAME] [--config FILE]
       claw pair <manifest> --list

Approves a pairing code that a channel in access_control mode "pairing" gave to an unknown user
(docs/channels.md). The user is paired on that channel, in the manifest's data_dir, and the running
agent lets them through from their next message. Codes expire after code_expiry_minutes.

Options:
  --list            print the pending codes: channel, code, user, expiry
  --channel NAME    only this channel (default: every channel in pairing mode)
  --config FILE     runtime configuration (default: claw.runtime.yaml beside the manifest)

Exit codes: 0 paired (or listed), 1 unknown or expired code, no pairing channel, 2 usage error.
`;

export const SEND_HELP = `Usage: claw send <uri> <method> [params-json] [options]

Sends one JSON-RPC request to an agent listening on <uri> (claw run --listen) and prints the
reply as one JSON line on stdout. Examples:
  claw send fs:/var/lib/claw/ipc claw.status
  claw send 'http://127.0.0.1:8080/ckp?token_ref=CLAW_HTTP_TOKEN' claw.status

Options:
  --timeout MS       how long to wait, connecting included (default 30000)
  --request-id ID    transport request_id (default: a new UUID); resend with the same ID to retry
                     safely: an already answered request_id gets the stored reply, not a second run
  --id ID            the JSON-RPC id (default: the request_id)
  --reply-to NAME    fs: read the reply from outbox/NAME/ instead of outbox/
  --notify           send a notification (no id, no reply)

Exit codes: 0 result, 1 error reply, 2 usage error, 3 no reply within the timeout,
4 transport failure (cannot write to or read from the URI).
`;

export const PROTOCOL_HELP = `Usage: claw protocol check --manifest FILE [options] < output.txt

Reads one candidate model output on stdin and validates it as a FemtoClaw protocol message against
the manifest's tools (docs/femtoclaw.md): strict JSON, exactly one of
  {"message":{"content":"..."}}  or  {"tool_call":{"tool":"<name>","args":{...}}},
an exact registered tool name, and args matching the tool's input_schema. Prints the verdict as
JSON on stdout: valid, form, tool, and for a rejection the failing step, reason and detail.

Options:
  --manifest FILE   the agent's manifest (its Tool primitives are the capability registry)
  --config FILE     runtime configuration: checked first, and its registries resolve claw:// references
  --max-bytes N     size limit in UTF-8 bytes (default 65536)
  --max-depth N     nesting limit (default 32)
  --correction      also print the correction message the agent would send the model

Exit codes: 0 valid, 1 rejected, 2 usage error or a manifest that does not load.
`;

export const AUDIT_HELP = `Usage: claw audit verify <file|dir> [--json] [--expect-head HASH]

Recomputes the audit log's hash chain (docs/audit.md) and reports the first record that does not
hold: unreadable, not canonical, edited (hash_mismatch), deleted / inserted / moved
(prev_mismatch), or a torn last line. Given the audit directory (data_dir/audit), verifies its
segment files as one chain and says where the history kept by retention begins.

Options:
  --json               print the result as JSON on stdout
  --expect-head HASH   also require the last record's hash to be HASH (a head kept elsewhere
                       shows records cut off the end, which the chain alone cannot)

Exit codes: 0 intact, 1 broken or unreadable, 2 usage error.
`;
