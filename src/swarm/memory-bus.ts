// An in-memory PeerBus hub: several agents in one process (unit tests, `backend: in-process`).
// Messages are JSON round-tripped so nothing shares objects across "peers", as on a real wire.
import { ProtocolError } from '../protocol/errors.ts';
import { BusError, type BusHandler, type PeerBus, type Presence, type SeenPeer } from './bus.ts';
import { timerDelay } from '../protocol/delay.ts';

interface Member {
  presence?: Presence;
  seenAt: number;
  handler?: BusHandler;
  /** Killed: presence reads 'unavailable', messages are lost (a crashed process). */
  dead: boolean;
}

export class MemoryHub {
  private readonly members = new Map<string, Member>();
  constructor(private readonly now: () => number = Date.now) {}

  connect(self: string): PeerBus {
    const hub = this;
    const member = (): Member => {
      let m = hub.members.get(self);
      if (!m) hub.members.set(self, (m = { seenAt: 0, dead: false }));
      return m;
    };
    return {
      self,
      async start(handler) {
        const m = member();
        m.handler = handler;
        m.dead = false;
      },
      async announce(p) {
        const m = member();
        if (m.dead) return;
        m.presence = { ...p };
        m.seenAt = hub.now();
      },
      peers(swarm) {
        const out: SeenPeer[] = [];
        for (const [id, m] of hub.members) {
          if (id === self || !m.presence || m.presence.swarm !== swarm) continue;
          out.push({ ...m.presence, status: m.dead ? 'unavailable' : m.presence.status, seen_at: m.seenAt });
        }
        return out;
      },
      request: (to, method, params, timeoutMs) => hub.deliver(to, method, params, timeoutMs),
      async notify(to, method, params) {
        hub.deliver(to, method, params, 60_000).catch(() => {});
      },
      async close() {
        const m = member();
        if (m.presence) m.presence = { ...m.presence, status: 'unavailable' };
        m.handler = undefined;
      },
    };
  }

  /** Simulate a SIGKILL: the peer stops answering and goes unavailable. */
  kill(identity: string): void {
    const m = this.members.get(identity);
    if (m) m.dead = true;
  }

  private deliver(to: string, method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    const m = this.members.get(to);
    if (!m || m.dead || !m.handler) return Promise.reject(new BusError('unreachable', `peer ${to} is not reachable`));
    const handler = m.handler;
    const wire = JSON.parse(JSON.stringify(params ?? null));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new BusError('unreachable', `peer ${to} did not answer within ${timeoutMs} ms`)), timerDelay(timeoutMs));
      handler({ method, params: wire }).then(
        (r) => {
          clearTimeout(timer);
          // A reply from a peer killed meanwhile never arrives.
          if (m.dead) return;
          resolve(r === undefined ? undefined : JSON.parse(JSON.stringify(r)));
        },
        (e) => {
          clearTimeout(timer);
          if (m.dead) return;
          reject(e instanceof ProtocolError ? new ProtocolError(e.code, e.message, e.data) : new ProtocolError(-32603, 'Internal error'));
        },
      );
    });
  }
}
