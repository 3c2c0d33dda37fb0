// Secret leak prevention (spec §5.9 `secret_scanning`; §10.2 threat "Secret exfiltration — leak
// scanning, output filtering"; runtime profile §7 "Secret values SHOULD NOT be logged, included in
// error messages, or transmitted").
//
// scanSecrets(text, known) finds:
//   - the built-in detectors of SECRET_DETECTORS (kinds below), and
//   - every exact occurrence of a known secret value (the runtime's resolved secrets), kind
//     `known-secret`, also in its JSON-escaped form. Values shorter than 4 characters are ignored
//     (they would mask ordinary text everywhere — same rule as src/log/redactor.ts).
// Findings are UTF-16 offsets [start, end) into `text`. Overlapping findings are merged into one
// (touching ones are not); the merged finding keeps the kind of the finding that starts first,
// ties broken by priority (known values first, then SECRET_DETECTORS order: specific before
// generic). Redaction replaces each finding with `[REDACTED:<kind>]`. Assignment-style detectors
// (`password=`, `Authorization: Bearer`, `AccountKey=`, key-like name + hex, ...) redact the
// value only, keeping the name so the output stays readable.
//
// Work is linear in the text length: every token detector starts with a look-behind that rejects
// positions inside a run of its own alphabet and uses bounded repetitions; the PEM detector is a
// hand-written single forward scan. No returned message ever contains a secret: findings carry
// only kinds and offsets.
//
// Configuration (PolicySpec['secret_scanning']):
//   - enabled: scanning is on unless `enabled: false` (a block without `enabled` is treated as on:
//     writing the block expresses the intent; fail closed). No block → off.
//   - scope: 'input' | 'output' | 'both'; absent → 'output' (the spec example's value and the
//     §10.2 "output filtering" mechanism). scansInputs()/scansOutputs() answer it;
//     applySecretScanning() takes the direction and passes through a direction out of scope.
//   - action: 'redact' (default when absent) | 'block' | 'warn'.
//       redact → action 'redacted', text redacted.
//       block  → action 'block'; the returned text is redacted anyway (never the original) — the
//                caller replaces the result with an error.
//       warn   → action 'warn'; the text passes UNCHANGED (that is what warn means); the caller
//                logs the finding kinds/offsets, never the text.
//   - patterns: informational only (the spec's "number of built-in patterns"); the full built-in
//     set (SECRET_DETECTORS.length detectors) always runs.
//
// Inputs (scope input/both): applySecretScanningToArgs() scans each string of the arguments
// (keys and values) separately and redacts strings in a copy. Because each string is scanned on
// its own, an argument `{ "password": "x" }` is not a finding (the name and the value are
// different strings) — a tool taking a password is the tool's business; what input scanning
// catches is a known secret or a recognisable token being handed to a tool.
import type { PolicySpec } from '../manifest/schema/index.ts';
import type { ContentBlock, ToolResult } from '../tools/types.ts';
import { appendPath } from './walk.ts';

export type SecretScanningConfig = PolicySpec['secret_scanning'];

export interface SecretFinding {
  kind: string;
  start: number;
  end: number;
}

export interface SecretScan {
  findings: SecretFinding[];
  redacted: string;
}

export interface SecretDetector {
  kind: string;
  description: string;
  /** Calls `push(start, end)` for every occurrence. */
  find(text: string, push: (start: number, end: number) => void): void;
}

export const KNOWN_SECRET_KIND = 'known-secret';
export const MIN_KNOWN_SECRET_LENGTH = 4;

/**
 * A regex detector. `groups`: capture groups holding the value to redact (the first one that
 * participated is used); none → the whole match.
 */
function rx(kind: string, description: string, source: string, flags = '', groups: number[] = []): SecretDetector {
  const shared = new RegExp(source, `g${groups.length ? 'd' : ''}${flags}`);
  return {
    kind,
    description,
    find(text, push) {
      const re = new RegExp(shared);
      let m: RegExpExecArray | null;
      while ((m = re.exec(text)) !== null) {
        if (m[0].length === 0) {
          re.lastIndex++;
          continue;
        }
        let span: [number, number] = [m.index, m.index + m[0].length];
        for (const g of groups) {
          const idx = m.indices?.[g];
          if (idx) {
            span = idx;
            break;
          }
        }
        push(span[0], span[1]);
      }
    },
  };
}

const PRIVATE_KEY_LABEL = /^(?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?$/;

function isPemBodyChar(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) || // 0-9
    (c >= 0x41 && c <= 0x5a) || // A-Z
    (c >= 0x61 && c <= 0x7a) || // a-z
    c === 0x2b || c === 0x2f || c === 0x3d || // + / =
    c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || // whitespace
    c === 0x5c || c === 0x3a || c === 0x2c || c === 0x2d // \ (escaped newlines) : , - (Proc-Type headers)
  );
}

/**
 * PEM private key blocks: `-----BEGIN <...> PRIVATE KEY[ BLOCK]-----`, its body, and the matching
 * END line. Without an END line (truncated output) the header and the body that follows — up to
 * the first character that cannot be part of a PEM body, or the next `-----` — are redacted.
 * One forward scan: each character is examined a bounded number of times.
 */
const pemDetector: SecretDetector = {
  kind: 'private-key',
  description: 'PEM private key block (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP ... PRIVATE KEY)',
  find(text, push) {
    let from = 0;
    for (;;) {
      const b = text.indexOf('-----BEGIN ', from);
      if (b < 0) return;
      const labelStart = b + 11;
      const hdrEnd = text.indexOf('-----', labelStart);
      if (hdrEnd < 0) return;
      const label = text.slice(labelStart, hdrEnd);
      if (label.length > 64 || !PRIVATE_KEY_LABEL.test(label)) {
        from = hdrEnd; // the dashes may open the next BEGIN
        continue;
      }
      let i = hdrEnd + 5;
      while (i < text.length && !text.startsWith('-----', i) && isPemBodyChar(text.charCodeAt(i))) i++;
      const endLine = `-----END ${label}-----`;
      const end = text.startsWith(endLine, i) ? i + endLine.length : i;
      push(b, end);
      from = end;
    }
  },
};

// Look-behinds: a token may not start inside a run of its own alphabet (see header).
const NB_ALNUM = '(?<![A-Za-z0-9])';
const NB_WORD = '(?<![A-Za-z0-9_])';
const NB_B64URL = '(?<![A-Za-z0-9_-])';
// `name ["']? (:|=) ["']?` — the separator of an assignment, bounded.
const ASSIGN = `["']?\\s{0,5}[:=]\\s{0,5}`;

/** Built-in detectors, in priority order (specific before generic). */
export const SECRET_DETECTORS: readonly SecretDetector[] = [
  pemDetector,
  rx('aws-access-key-id', 'AWS access key id (AKIA/ASIA...)', `${NB_ALNUM}(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Za-z])`),
  rx(
    'aws-secret-access-key',
    'AWS secret access key: 40 base64 characters after an aws_secret_access_key-like name',
    `(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)${ASSIGN}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`,
    'i',
    [1],
  ),
  rx('github-token', 'GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)', `${NB_ALNUM}gh[pousr]_[A-Za-z0-9]{36,251}(?![A-Za-z0-9])`),
  rx('github-fine-grained-token', 'GitHub fine-grained PAT (github_pat_)', `${NB_WORD}github_pat_[A-Za-z0-9_]{22,255}(?![A-Za-z0-9_])`),
  rx('gitlab-token', 'GitLab personal access token (glpat-)', `${NB_B64URL}glpat-[A-Za-z0-9_-]{20,64}(?![A-Za-z0-9_-])`),
  rx('slack-token', 'Slack token (xoxa-, xoxb-, xoxp-, xoxr-, xoxs-)', `${NB_ALNUM}xox[abprs]-[A-Za-z0-9-]{10,250}`),
  rx(
    'slack-webhook',
    'Slack incoming webhook URL',
    'https://hooks\\.slack\\.com/services/T[A-Za-z0-9_]{6,20}/B[A-Za-z0-9_]{6,20}/[A-Za-z0-9_]{16,64}',
  ),
  rx('stripe-secret-key', 'Stripe secret / restricted key (sk_live_, rk_live_, sk_test_)', `${NB_ALNUM}[sr]k_(?:live|test)_[A-Za-z0-9]{16,247}(?![A-Za-z0-9])`),
  rx('anthropic-api-key', 'Anthropic API key (sk-ant-)', `${NB_B64URL}sk-ant-[A-Za-z0-9_-]{20,250}`),
  rx(
    'openai-api-key',
    'OpenAI API key (sk-, sk-proj-, sk-svcacct-, sk-admin-) with at least one digit',
    `${NB_B64URL}sk-(?=[A-Za-z_-]{0,250}[0-9])(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,250}`,
  ),
  rx('google-api-key', 'Google API key (AIza + 35)', `${NB_B64URL}AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])`),
  rx('google-oauth-client-secret', 'Google OAuth client secret (GOCSPX-)', `${NB_B64URL}GOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])`),
  rx(
    'jwt',
    'JSON Web Token: three base64url segments, header and payload starting eyJ',
    `${NB_B64URL}eyJ[A-Za-z0-9_-]{5,4096}\\.eyJ[A-Za-z0-9_-]{5,8192}\\.[A-Za-z0-9_-]{0,4096}`,
  ),
  rx('npm-token', 'npm access token (npm_)', `${NB_WORD}npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])`),
  rx('pypi-token', 'PyPI upload token (pypi-AgEIcHlwaS5vcmc...)', `${NB_B64URL}pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,1000}`),
  rx('twilio-api-key', 'Twilio API key SID (SK + 32 hex)', `${NB_ALNUM}SK[0-9a-fA-F]{32}(?![0-9A-Za-z])`),
  rx('sendgrid-api-key', 'SendGrid API key (SG.xxx.yyy)', `${NB_ALNUM}SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])`),
  rx('azure-storage-key', 'Azure storage account key (AccountKey=...)', 'AccountKey=([A-Za-z0-9+/]{40,100}={0,2})', 'i', [1]),
  rx('huggingface-token', 'Hugging Face token (hf_)', `${NB_WORD}hf_[A-Za-z0-9]{34,40}(?![A-Za-z0-9])`),
  rx('digitalocean-token', 'DigitalOcean token (dop_v1_, doo_v1_, dor_v1_)', `${NB_WORD}do[opr]_v1_[a-f0-9]{64}(?![a-f0-9])`),
  rx('shopify-token', 'Shopify token (shpat_, shpca_, shppa_, shpss_)', `${NB_WORD}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![a-fA-F0-9])`),
  rx('telegram-bot-token', 'Telegram bot token (id:AA...)', '(?<![0-9])[0-9]{8,10}:AA[0-9A-Za-z_-]{33}(?![0-9A-Za-z_-])'),
  rx('age-secret-key', 'age encryption secret key (AGE-SECRET-KEY-1...)', 'AGE-SECRET-KEY-1[0-9A-Z]{58}'),
  rx(
    'bearer-token',
    'Bearer token in an Authorization header (value only)',
    `\\bauthorization${ASSIGN}["']?bearer\\s{1,5}([A-Za-z0-9._~+/-]{8,4096}={0,2})`,
    'i',
    [1],
  ),
  rx(
    'basic-auth',
    'Basic credentials in an Authorization header (value only)',
    `\\bauthorization${ASSIGN}["']?basic\\s{1,5}([A-Za-z0-9+/]{8,4096}={0,2})`,
    'i',
    [1],
  ),
  rx(
    'url-credentials',
    'password in a URL userinfo (scheme://user:password@host, password only)',
    '(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{1,20}://[^\\s/:@]{1,128}:([^\\s/@]{1,256})@',
    'i',
    [1],
  ),
  rx(
    'password-assignment',
    'password= / passwd: / passphrase= / secret= assignment (value only)',
    `(?:password|passwd|passphrase|secret(?:[_-]?(?:key|token|value))?)${ASSIGN}(?:"([^"\\r\\n]{1,256})"|'([^'\\r\\n]{1,256})'|([^\\s"',;&{}]{1,256}))`,
    'i',
    [1, 2, 3],
  ),
  rx(
    'api-key-assignment',
    'api_key= / access_token= / client_secret= / private_key= assignment of 16+ token characters (value only)',
    `(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|private[_-]?key)${ASSIGN}["']?([A-Za-z0-9_\\-+/=.]{16,512})`,
    'i',
    [1],
  ),
  rx(
    'generic-hex-secret',
    '40+ hex characters after a key-like name (key, token, secret, password, auth, credential, signature, private)',
    `(?:key|token|secret|passw(?:or)?d|auth|credential|signature|private)[A-Za-z0-9_.-]{0,30}${ASSIGN}["']?([0-9a-fA-F]{40,512})(?![0-9a-fA-F])`,
    'i',
    [1],
  ),
];

// ---------------------------------------------------------------------------------------------

/** All findings (merged) and the redacted text. */
export function scanSecrets(text: string, known: Iterable<string> = []): SecretScan {
  const raw: { start: number; end: number; prio: number; kind: string }[] = [];

  let prio = 0;
  const values = new Set<string>();
  for (const k of known) {
    if (typeof k !== 'string' || k.length < MIN_KNOWN_SECRET_LENGTH) continue;
    values.add(k);
    const json = JSON.stringify(k).slice(1, -1); // the value as it appears inside a JSON string
    if (json !== k) values.add(json);
  }
  for (const v of values) {
    for (let i = text.indexOf(v); i >= 0; i = text.indexOf(v, i + v.length)) {
      raw.push({ start: i, end: i + v.length, prio, kind: KNOWN_SECRET_KIND });
    }
  }
  for (const d of SECRET_DETECTORS) {
    prio++;
    const p = prio;
    d.find(text, (start, end) => {
      if (end > start) raw.push({ start, end, prio: p, kind: d.kind });
    });
  }

  raw.sort((a, b) => a.start - b.start || a.prio - b.prio);
  const findings: SecretFinding[] = [];
  for (const r of raw) {
    const last = findings[findings.length - 1];
    if (last && r.start < last.end) {
      if (r.end > last.end) last.end = r.end;
    } else findings.push({ kind: r.kind, start: r.start, end: r.end });
  }

  let redacted = '';
  let at = 0;
  for (const f of findings) {
    redacted += `${text.slice(at, f.start)}[REDACTED:${f.kind}]`;
    at = f.end;
  }
  redacted += text.slice(at);
  return { findings, redacted };
}

// ---------------------------------------------------------------------------------------------
// Configuration

export type SecretScanAction = 'pass' | 'redacted' | 'block' | 'warn';

export function scanningEnabled(cfg: SecretScanningConfig): boolean {
  return cfg !== undefined && cfg.enabled !== false;
}

export function scansInputs(cfg: SecretScanningConfig): boolean {
  if (!scanningEnabled(cfg)) return false;
  const scope = cfg!.scope ?? 'output';
  return scope === 'input' || scope === 'both';
}

export function scansOutputs(cfg: SecretScanningConfig): boolean {
  if (!scanningEnabled(cfg)) return false;
  const scope = cfg!.scope ?? 'output';
  return scope === 'output' || scope === 'both';
}

export interface SecretScanOutcome {
  action: SecretScanAction;
  /** Redacted under redact and block; unchanged under warn and pass. */
  text: string;
  findings: SecretFinding[];
  /** For logs and error data: counts and kinds, never values. Absent on pass. */
  message?: string;
}

function summary(findings: { kind: string }[], what: string): string {
  const kinds = [...new Set(findings.map((f) => f.kind))].sort();
  return `secret scanning: ${findings.length} finding(s) in the tool ${what} (${kinds.join(', ')})`;
}

function actionFor(cfg: SecretScanningConfig): Exclude<SecretScanAction, 'pass'> {
  const a = cfg?.action ?? 'redact';
  return a === 'redact' ? 'redacted' : a;
}

/**
 * Applies `secret_scanning` to one text (a tool output by default). A direction outside the
 * configured scope, or scanning disabled, passes the text through unscanned.
 */
export function applySecretScanning(
  text: string,
  cfg: SecretScanningConfig,
  known: Iterable<string> = [],
  direction: 'input' | 'output' = 'output',
): SecretScanOutcome {
  if (!(direction === 'output' ? scansOutputs(cfg) : scansInputs(cfg))) return { action: 'pass', text, findings: [] };
  const scan = scanSecrets(text, known);
  if (scan.findings.length === 0) return { action: 'pass', text, findings: [] };
  const action = actionFor(cfg);
  return {
    action,
    text: action === 'warn' ? text : scan.redacted,
    findings: scan.findings,
    message: summary(scan.findings, direction),
  };
}

export interface ResultScanOutcome {
  action: SecretScanAction;
  result: ToolResult;
  /** Findings per content block index (offsets into that block's text). */
  findings: { block: number; kind: string; start: number; end: number }[];
  message?: string;
}

/**
 * Output scanning of a whole ToolResult: `text` blocks and `resource.text` strings are scanned
 * (image data is not). Under redact/block the returned result is a redacted copy.
 */
export function applySecretScanningToResult(
  result: ToolResult,
  cfg: SecretScanningConfig,
  known: Iterable<string> = [],
): ResultScanOutcome {
  if (!scansOutputs(cfg)) return { action: 'pass', result, findings: [] };
  const knownList = [...known];
  const findings: ResultScanOutcome['findings'] = [];
  const content: ContentBlock[] = result.content.map((block, i) => {
    const text = block.type === 'text' ? block.text : block.type === 'resource' && typeof block.resource.text === 'string' ? block.resource.text : undefined;
    if (text === undefined) return block;
    const scan = scanSecrets(text, knownList);
    if (scan.findings.length === 0) return block;
    for (const f of scan.findings) findings.push({ block: i, ...f });
    if (block.type === 'text') return { ...block, text: scan.redacted };
    if (block.type === 'resource') return { ...block, resource: { ...block.resource, text: scan.redacted } };
    return block;
  });
  if (findings.length === 0) return { action: 'pass', result, findings: [] };
  const action = actionFor(cfg);
  return {
    action,
    result: action === 'warn' ? result : { ...result, content },
    findings,
    message: summary(findings, 'output'),
  };
}

export interface ArgsScanOutcome {
  action: SecretScanAction;
  /** A redacted copy under redact/block; the original under warn and pass. */
  args: unknown;
  /** Findings with the JSONPath-like location of the string (offsets into that string). */
  findings: { path: string; where: 'key' | 'value'; kind: string; start: number; end: number }[];
  message?: string;
}

const MAX_ARGS_DEPTH = 128;

/**
 * Input scanning of tool-call arguments: every string (keys and values) scanned on its own (see
 * header). Nesting deeper than 128 levels is reported as a finding of kind `scan-limit-exceeded`.
 */
export function applySecretScanningToArgs(args: unknown, cfg: SecretScanningConfig, known: Iterable<string> = []): ArgsScanOutcome {
  if (!scansInputs(cfg)) return { action: 'pass', args, findings: [] };
  const knownList = [...known];
  const findings: ArgsScanOutcome['findings'] = [];
  const scanOne = (s: string, path: string, where: 'key' | 'value'): string => {
    const scan = scanSecrets(s, knownList);
    for (const f of scan.findings) findings.push({ path, where, ...f });
    return scan.redacted;
  };
  const copy = (v: unknown, path: string, depth: number): unknown => {
    if (typeof v === 'string') return scanOne(v, path, 'value');
    if (typeof v !== 'object' || v === null) return v;
    if (depth >= MAX_ARGS_DEPTH) {
      findings.push({ path, where: 'value', kind: 'scan-limit-exceeded', start: 0, end: 0 });
      return null;
    }
    if (Array.isArray(v)) return v.map((x, i) => copy(x, appendPath(path, i), depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      // Paths are built from the REDACTED key: a key holding a secret must not leak via a path.
      const before = findings.length;
      const rk = scanOne(k, '', 'key');
      const p = appendPath(path, rk);
      for (let i = before; i < findings.length; i++) findings[i].path = p;
      out[rk] = copy(x, p, depth + 1);
    }
    return out;
  };
  const redacted = copy(args, '$', 0);
  if (findings.length === 0) return { action: 'pass', args, findings: [] };
  const action = actionFor(cfg);
  return {
    action,
    args: action === 'warn' ? args : redacted,
    findings,
    message: summary(findings, 'input'),
  };
}
