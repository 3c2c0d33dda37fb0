// An agent that serves A2A from dist/claw.mjs, for the A2A e2e suites: its manifest (the offline rules
// provider, a terminal Channel, the webhook Channel its A2A callers use, allow-all policy), its runtime
// configuration (the HTTP listener, exec bindings for its tools, the a2a block) and a start that waits
// until the agent card is served. Each suite passes only what differs: tools, channel access, sandbox.
import { request, startHttpClaw, type HttpClaw } from './http-claw.ts';
import { sleep } from './e2e-util.ts';

/** The webhook Channel A2A callers are users of (docs/a2a.md "Security"), one line under `channels:`. */
export const agentsChannel = (o: { secretRef?: string; access?: string; extra?: string } = {}) =>
  `    - inline: { name: "agents", type: "webhook", transport: "webhook", auth: { secret_ref: "${o.secretRef ?? 'A2A_TOKEN'}" }, access_control: ${o.access ?? '{ mode: "allowlist", allowed_ids: ["A2A_TOKEN"] }'}${o.extra ?? ''} }\n`;

/** Offline rules: `slow…` calls the `slow` tool (then answers JOB-DONE), `hello…` answers at once. */
export const SLOW_TOOL_RULES = `rules:
  - match: "^slow"
    tool_call: { tool: slow, args: {} }
  - match: "^hello"
    message: "Hello."
default:
  message: "No rule for that."
after_tool:
  message: "JOB-DONE"
`;

export interface A2aManifest {
  name: string;
  version?: string;
  personality: string;
  supervised?: boolean;
  /** What the channels list holds after the terminal: default `agentsChannel()`, '' for no webhook Channel. */
  channels?: string;
  /** Spec entries between channels and sandbox (`  tools:` …, `  skills:` …, `  memory:` …), each line ending in \n. */
  spec?: string;
  sandbox?: 'none' | 'process';
  /** Lines of the policy after its allow-all rules (e.g. `        prompt_injection: …`). */
  policy?: string;
}

export const a2aManifest = (o: A2aManifest) => `claw: "0.3.0"
kind: Claw
metadata: { name: "${o.name}", version: "${o.version ?? '1.0.0'}" }
spec:
  identity:
    inline: { name: "${o.name}", personality: "${o.personality}", autonomy: "${o.supervised ? 'supervised' : 'autonomous'}" }
  providers:
    - inline: { name: "offline", protocol: "custom", endpoint: "file:rules.yaml", model: "rules", auth: { type: "none" } }
  channels:
    - inline: { name: "terminal", type: "cli", transport: "stdio", auth: { secret_ref: "CLI_TOKEN" }, access_control: { mode: "open" } }
${o.channels ?? agentsChannel()}${o.spec ?? ''}  sandbox: { inline: { level: "${o.sandbox ?? 'none'}" } }
  policies:
    - inline:
        rules:
          - { id: "allow-all", action: "allow", scope: "all" }
${o.policy ?? ''}`;

export interface A2aRuntime {
  /** The listener's `http:` block; default: bearer A2A_TOKEN. */
  http?: string;
  /** Exec bindings: tool name → /bin/sh -c command. */
  exec?: Record<string, string>;
  /** a2a.tools (the agent's tools run for A2A callers); `a2a: false` leaves A2A off. */
  tools?: boolean;
  a2a?: boolean;
  /** Top-level entries before the rest (data_dir, sandbox), each line ending in \n. */
  before?: string;
}

export function a2aRuntime(o: A2aRuntime = {}): string {
  const exec = Object.entries(o.exec ?? {});
  const tools = exec.length ? `tools:\n${exec.map(([name, cmd]) => `  ${name}:\n    exec: { bin: /bin/sh, argv: ["-c", ${JSON.stringify(cmd)}] }\n`).join('')}` : '';
  const a2a = o.a2a === false ? '' : `a2a: { enabled: true${o.tools ? ', tools: true' : ''} }\n`;
  return `${o.before ?? ''}${tools}transports:
  - listen: http://127.0.0.1:0/ckp
    http: ${o.http ?? '{ auth: { bearer_token_refs: [A2A_TOKEN] } }'}
${a2a}`;
}

export interface A2aAgent extends HttpClaw {
  /** The listener's origin: the card and the A2A endpoints live there. */
  base: string;
}

/**
 * `claw run claw.yaml --start` with the manifest, rules and runtime configuration given. `--start` opens the
 * session after the listener: unless `waitForCard` is false, this waits until the card is served or the
 * process ends (a session refused at STARTING never serves it).
 */
export async function startA2aAgent(o: { manifest: string; rules: string; config: string; env: Record<string, string>; runtime?: string; waitForCard?: boolean }): Promise<A2aAgent> {
  const h = await startHttpClaw(o.config, { args: ['claw.yaml', '--start'], env: o.env, files: { 'claw.yaml': o.manifest, 'rules.yaml': o.rules }, runtime: o.runtime });
  const base = new URL(h.url).origin;
  const end = Date.now() + 15_000;
  while (o.waitForCard !== false && h.c.child.exitCode === null && Date.now() < end) {
    const r = await request(`${base}/.well-known/agent-card.json`, { method: 'GET' }).catch(() => undefined);
    if (r?.status === 200) break;
    await sleep(50);
  }
  return { ...h, base };
}

/** `fetch` with `Authorization: Bearer <token>`, for the official client's transports and card resolver. */
export const bearerFetch =
  (token: string, seen?: string[]): typeof fetch =>
  (input, init) => {
    seen?.push(`${init?.method ?? 'GET'} ${String(input)}`);
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
