// The swarm over a shared directory (docs/swarm.md), for containers and boards without a broker:
//   {root}/registry/{swarm}/{identity}.json   presence, rewritten (tmp + rename) every interval
//   {root}/peers/{identity}/                  the peer's inbox: engineer D's fs transport
//                                             (profile §6.3), replies in outbox/{sender}/
// A presence older than `staleAfterMs`, or naming a dead pid on this host, reads 'unavailable'
// (a SIGKILLed peer cannot withdraw its own file). Requests to an unavailable peer are not
// written at all: a file left in a dead peer's inbox would run when it restarts, after the
// delegator has moved on.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Clock, Logger, Transport } from '../kernel/ports.ts';
import { WallAges } from '../kernel/wall-age.ts';
import { ClawError } from '../protocol/errors.ts';
import { writeAtomic } from '../transports/fs/layout.ts';
import type { TransportClient } from '../transports/client.ts';
import { BusError, type PeerBus, type Presence, type SeenPeer } from './bus.ts';
import { peerCalls, serveBus } from './serve.ts';

export interface FsBusOptions {
  root: string;
  self: string;
  log: Logger;
  clock: Clock;
  /** Presence older than this reads 'unavailable'. */
  staleAfterMs: number;
  /** The inbox's polling interval (fs.watch sees most files at once; polling is the safety net). */
  pollMs: number;
}

interface PresenceFile extends Presence {
  pid: number;
  host: string;
  updated_at: number;
}

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

export function openFsBus(o: FsBusOptions): PeerBus {
  if (!NAME.test(o.self)) throw new ClawError('usage', `identity "${o.self}" cannot name a file: 1-128 characters of A-Z a-z 0-9 _ . -`);
  const host = hostname();
  const inbox = (id: string) => `${o.root}/peers/${id}`;
  const registry = (swarm: string) => `${o.root}/registry/${swarm}`;
  const clients = new Map<string, Promise<TransportClient>>();
  let transport: Transport | undefined;
  let last: Presence | undefined;

  /** One presence file, if it is readable and names the identity its file name says. */
  const readOne = (swarm: string, n: string): PresenceFile | undefined => {
    try {
      const p = JSON.parse(readFileSync(`${registry(swarm)}/${n}`, 'utf8')) as PresenceFile;
      if (typeof p.identity === 'string' && NAME.test(p.identity) && `${p.identity}.json` === n && Number.isFinite(p.updated_at)) return p;
    } catch {}
    return undefined;
  };

  const read = (swarm: string): PresenceFile[] => {
    let names: string[];
    try {
      names = readdirSync(registry(swarm));
    } catch {
      return [];
    }
    const out: PresenceFile[] = [];
    for (const n of names) {
      if (!n.endsWith('.json')) continue;
      const p = readOne(swarm, n);
      if (p) out.push(p);
    }
    return out;
  };

  // A presence's updated_at is aged across a wall-clock step (src/kernel/wall-age.ts): set back a year, a dead
  // peer's last presence would read fresh for a year; set forward, every live peer stale until it writes again.
  const ages = new WallAges(o.clock);
  // A stamp ahead of this clock that no step seen by this process explains (written before the clock was set
  // back, before this start, or by a host whose clock is ahead) reads as age 0 there, so a gone peer's file
  // would read live until the clock caught up (a year back: a year). It is aged from when this bus first saw
  // that stamp, on the monotonic clock: a live peer rewrites it (a new stamp) within staleAfterMs.
  const aheadSince = new Map<string, { stamp: number; since: number }>();
  const aheadAge = (p: PresenceFile): number => {
    const key = `${p.swarm}/${p.identity}`;
    if (!(p.updated_at > o.clock.now())) return void aheadSince.delete(key), 0;
    const m = o.clock.monotonic();
    let e = aheadSince.get(key);
    if (!e || e.stamp !== p.updated_at) {
      if (!e && aheadSince.size >= 4096) aheadSince.clear(); // bounded: one entry per presence file seen ahead
      aheadSince.set(key, (e = { stamp: p.updated_at, since: m }));
    }
    return m - e.since;
  };
  const alive = (p: PresenceFile): boolean => {
    if (Math.max(ages.ages()(p.updated_at), aheadAge(p)) > o.staleAfterMs) return false;
    if (p.host !== host || !Number.isInteger(p.pid)) return true;
    try {
      process.kill(p.pid, 0);
      return true;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'EPERM';
    }
  };

  const seen = (swarm: string): SeenPeer[] =>
    read(swarm)
      .filter((p) => p.identity !== o.self)
      .map((p) => ({
        identity: p.identity,
        swarm: p.swarm,
        role: String(p.role),
        status: alive(p) && (p.status === 'ready' || p.status === 'busy') ? p.status : 'unavailable',
        seen_at: p.updated_at,
      }));

  const client = (to: string): Promise<TransportClient> => {
    let c = clients.get(to);
    if (!c) {
      c = import('../transports/fs/client-fs.ts').then((m) => m.connectFsClient(`fs:${inbox(to)}?poll_interval_ms=${o.pollMs}`, { baseDir: o.root, sender: o.self, clock: o.clock, log: o.log }));
      c.catch(() => clients.delete(to));
      clients.set(to, c);
    }
    return c;
  };

  const reachable = (to: string) => {
    if (!NAME.test(to)) throw new BusError('unreachable', `peer name "${to}" is not addressable`);
    // Only the one peer's presence file: a request must not list and parse the whole registry.
    const p = last && to !== o.self ? readOne(last.swarm, `${to}.json`) : undefined;
    if (p && !(alive(p) && (p.status === 'ready' || p.status === 'busy'))) throw new BusError('unreachable', `peer ${to} is unavailable`);
  };

  return {
    self: o.self,
    async start(handler) {
      mkdirSync(inbox(o.self), { recursive: true });
      const { createFsListener } = await import('../transports/fs/listen-fs.ts');
      // Peer messages are small and re-sent on loss: no fsync per reply; processed files deleted.
      transport = createFsListener(
        { listen: `fs:${inbox(o.self)}`, fs: { poll_interval_ms: o.pollMs, processed: 'delete', fsync: false } },
        { log: o.log, clock: o.clock, baseDir: o.root, dataDir: o.root },
      );
      serveBus(transport, handler, o.log);
    },
    async announce(p) {
      last = p;
      mkdirSync(registry(p.swarm), { recursive: true });
      const file: PresenceFile = { ...p, pid: process.pid, host, updated_at: o.clock.now() };
      writeAtomic(registry(p.swarm), `${o.self}.json`, JSON.stringify(file), false);
    },
    peers: seen,
    ...peerCalls(
      {
        request: async (to, msg, opts) => (await client(to)).request(msg as never, opts),
        notify: async (to, msg) => (await client(to)).notify(msg as never),
      },
      reachable,
    ),
    async close() {
      if (last) {
        try {
          writeAtomic(registry(last.swarm), `${o.self}.json`, JSON.stringify({ ...last, status: 'unavailable', pid: process.pid, host, updated_at: o.clock.now() }), false);
        } catch {}
      }
      await transport?.close().catch(() => {});
      for (const c of clients.values()) await c.then((x) => x.close()).catch(() => {});
      clients.clear();
    },
  };
}
