// IP address parsing and the SSRF classifier (spec §5.8 `ssrf_protection`, §10.2 "SSRF attacks").
// Pure: no node: imports, so the policy can be unit tested and reused by any transport.
//
// `blockReason(addr)` names why an address must not be reached from a tool, or returns null for an
// ordinary public unicast address. Addresses that embed an IPv4 address (IPv4-mapped, -compatible,
// -translated, NAT64 64:ff9b::/96, 6to4 2002::/16, Teredo) are judged by the IPv4 address they
// carry, because that is where the packets end up.

export type BlockReason =
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmark'
  | 'reserved'
  | 'invalid';

/** Reasons that `block_private_ips: false` lifts (RFC 1918, ULA, CGNAT: private networks, not the host itself). */
export const PRIVATE_REASONS: ReadonlySet<BlockReason> = new Set(['private', 'cgnat']);

// ---------------------------------------------------------------- IPv4

const DOTTED = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** Canonical dotted-quad only (no leading zeros): what DNS answers and socket addresses look like. */
export function parseIPv4(s: string): number | null {
  const m = DOTTED.exec(s);
  return m ? ((+m[1] << 24) | (+m[2] << 16) | (+m[3] << 8) | +m[4]) >>> 0 : null;
}

/**
 * The inet_aton / WHATWG spellings attackers use: 1 to 4 parts, each decimal, octal (leading 0) or
 * hex (0x), the last part filling the remaining bytes (`127.1`, `0x7f.1`, `2130706433`,
 * `017700000001`, `0177.0.0.1`), one trailing dot allowed. `new URL()` already rewrites these to
 * dotted-quad, and getaddrinfo() would read them as addresses too, so anything that parses here is
 * treated as an IP literal, never as a name.
 */
export function parseIPv4Loose(s: string): number | null {
  const parts = s.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length < 1 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const p of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(p)) n = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]*$/.test(p)) n = parseInt(p, 8);
    else if (/^[1-9]\d*$/.test(p)) n = parseInt(p, 10);
    else return null;
    nums.push(n);
  }
  const last = nums.pop() as number;
  if (nums.some((n) => n > 255) || last >= 256 ** (4 - nums.length)) return null;
  return nums.reduce((acc, n, i) => acc + n * 256 ** (3 - i), 0) + last;
}

export const formatIPv4 = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

const cidr4 = (s: string): [number, number] => {
  const [a, bits] = s.split('/');
  const mask = +bits === 0 ? 0 : (~0 << (32 - +bits)) >>> 0;
  return [((parseIPv4(a) as number) & mask) >>> 0, mask];
};

// First match wins: exact metadata/broadcast addresses sit before the ranges that contain them.
const V4_TABLE: [number, number, BlockReason][] = (
  [
    ['169.254.169.254/32', 'metadata'], // AWS, GCP, Azure, OCI, DigitalOcean... instance metadata
    ['169.254.170.2/32', 'metadata'], // AWS ECS task metadata / credentials
    ['169.254.170.23/32', 'metadata'], // AWS EKS pod identity agent
    ['100.100.100.200/32', 'metadata'], // Alibaba Cloud
    ['192.0.0.192/32', 'metadata'], // Oracle Cloud (legacy)
    ['255.255.255.255/32', 'broadcast'],
    ['0.0.0.0/8', 'unspecified'], // "this network"; connecting to 0.0.0.0 reaches localhost on Linux
    ['10.0.0.0/8', 'private'],
    ['100.64.0.0/10', 'cgnat'],
    ['127.0.0.0/8', 'loopback'],
    ['169.254.0.0/16', 'link-local'],
    ['172.16.0.0/12', 'private'],
    ['192.0.0.0/24', 'reserved'], // IETF protocol assignments
    ['192.0.2.0/24', 'documentation'], // TEST-NET-1
    ['192.88.99.0/24', 'reserved'], // 6to4 relay anycast (deprecated)
    ['192.168.0.0/16', 'private'],
    ['198.18.0.0/15', 'benchmark'],
    ['198.51.100.0/24', 'documentation'], // TEST-NET-2
    ['203.0.113.0/24', 'documentation'], // TEST-NET-3
    ['224.0.0.0/4', 'multicast'],
    ['240.0.0.0/4', 'reserved'], // future use
  ] as const
).map(([c, r]) => [...cidr4(c), r]);

export function blockReasonV4(n: number): BlockReason | null {
  for (const [net, mask, reason] of V4_TABLE) if ((n & mask) >>> 0 === net) return reason;
  return null;
}

// ---------------------------------------------------------------- IPv6

/** Eight 16-bit groups, or null. Accepts `[...]`, a `%zone` suffix and a dotted IPv4 tail. */
export function parseIPv6(input: string): number[] | null {
  let s = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(':') || !/^[0-9a-f:.]+$/i.test(s)) return null;
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.', lastColon)) {
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (v4 === null) return null;
    s = `${s.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const groups = (p: string) => (p === '' ? [] : p.split(':').map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN)));
  const dbl = s.indexOf('::');
  let out: number[];
  if (dbl >= 0) {
    if (s.indexOf('::', dbl + 1) >= 0) return null;
    const head = groups(s.slice(0, dbl));
    const tail = groups(s.slice(dbl + 2));
    if (head.length + tail.length > 7) return null;
    out = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    out = groups(s);
    if (out.length !== 8) return null;
  }
  return out.some(Number.isNaN) ? null : out;
}

/** RFC 5952 text: lower case, longest run (>= 2) of zero groups compressed, ::ffff:a.b.c.d. */
export function formatIPv6(g: readonly number[]): string {
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return `::ffff:${formatIPv4(((g[6] << 16) | g[7]) >>> 0)}`;
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  return best < 0 ? hex.join(':') : `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** Does `g` start with the `bits`-bit prefix given as groups `p`? */
function under(g: readonly number[], p: readonly number[], bits: number): boolean {
  for (let i = 0; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((g[i] & mask) !== ((p[i] ?? 0) & mask)) return false;
  }
  return true;
}

const v4At = (g: readonly number[], i: number): number => ((g[i] << 16) | g[i + 1]) >>> 0;
const zeros = (g: readonly number[], n: number): boolean => g.slice(0, n).every((x) => x === 0);

export function blockReasonV6(g: readonly number[]): BlockReason | null {
  if (zeros(g, 8)) return 'unspecified';
  if (zeros(g, 7) && g[7] === 1) return 'loopback';
  if (formatIPv6(g) === 'fd00:ec2::254') return 'metadata'; // AWS IMDS over IPv6
  // Embedded IPv4, judged by the v4 address: mapped ::ffff:0:0/96, translated ::ffff:0:0:0/96,
  // compatible ::/96 (deprecated), NAT64 64:ff9b::/96 (RFC 6052).
  if (zeros(g, 5) && g[5] === 0xffff) return blockReasonV4(v4At(g, 6));
  if (zeros(g, 4) && g[4] === 0xffff && g[5] === 0) return blockReasonV4(v4At(g, 6));
  if (zeros(g, 6)) return blockReasonV4(v4At(g, 6));
  if (under(g, [0x64, 0xff9b], 96)) return blockReasonV4(v4At(g, 6));
  if (under(g, [0x64, 0xff9b, 1], 48)) return 'private'; // local-use NAT64 (RFC 8215)
  if (under(g, [0x2002], 16)) return blockReasonV4(v4At(g, 1)); // 6to4: v4 in bits 16..47
  if (under(g, [0x2001, 0], 32)) {
    // Teredo: server v4 in bits 32..63, client v4 (bit-inverted) in the last 32 bits.
    return blockReasonV4(v4At(g, 2)) ?? blockReasonV4(~v4At(g, 6) >>> 0);
  }
  if (under(g, [0x2001, 2, 0], 48)) return 'benchmark';
  if (under(g, [0x2001, 0xdb8], 32)) return 'documentation';
  if (under(g, [0x2001], 23)) return 'reserved'; // IETF protocol assignments (ORCHID, AMT, AS112...)
  if (under(g, [0x3fff], 20)) return 'documentation'; // RFC 9637
  if (under(g, [0x5f00], 16)) return 'reserved'; // SRv6 SIDs
  if (under(g, [0xfc00], 7)) return 'private'; // unique local
  if (under(g, [0xfe80], 10)) return 'link-local';
  if (under(g, [0xfec0], 10)) return 'private'; // site-local (deprecated)
  if (under(g, [0xff00], 8)) return 'multicast';
  if (!under(g, [0x2000], 3)) return 'reserved'; // only 2000::/3 is allocated global unicast
  return null;
}

// ---------------------------------------------------------------- both

export type ParsedIp = { family: 4; v4: number } | { family: 6; groups: number[] };

/** Any IP spelling (canonical v4, odd v4, v6 with or without brackets/zone), or null for a name. */
export function parseIp(s: string): ParsedIp | null {
  const v6 = parseIPv6(s);
  if (v6) return { family: 6, groups: v6 };
  const v4 = parseIPv4(s) ?? parseIPv4Loose(s);
  return v4 === null ? null : { family: 4, v4 };
}

/** Canonical text of an IP literal (dotted quad / RFC 5952), or null when `s` is not one. */
export function canonicalIp(s: string): string | null {
  const ip = parseIp(s);
  return ip === null ? null : ip.family === 4 ? formatIPv4(ip.v4) : formatIPv6(ip.groups);
}

/** Why `addr` is special, or null for public unicast. Not an IP at all → 'invalid'. */
export function blockReason(addr: string): BlockReason | null {
  const ip = parseIp(addr);
  if (ip === null) return 'invalid';
  return ip.family === 4 ? blockReasonV4(ip.v4) : blockReasonV6(ip.groups);
}

/** The SSRF verdict under `block_private_ips` (default true): the reason to refuse, or null. */
export function ssrfBlocked(addr: string, blockPrivate = true): BlockReason | null {
  const r = blockReason(addr);
  return r !== null && !blockPrivate && PRIVATE_REASONS.has(r) ? null : r;
}

/**
 * Names refused before any DNS query: `localhost` and `*.localhost` always mean loopback
 * (RFC 6761) whatever a resolver says, and the cloud metadata names. Their addresses are blocked
 * anyway; this just fails early and clearly. `host` is lower case without a trailing dot.
 */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
]);
export function blockedHostname(host: string): BlockReason | null {
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  return METADATA_NAMES.has(host) ? 'metadata' : null;
}
