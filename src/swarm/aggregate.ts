// How several peers' reports become one task result (spec §5.10 aggregation.strategy). Pure.
// Strategies as implemented (docs/swarm.md):
//   merge           plain-object results shallow-merged in manifest order (later members win a
//                   key); any other result shape → the array of results in manifest order
//   leader-decides  nothing is combined: the result lists every completed report for the leader
//   majority-vote   the result given by more than half of the completed reports; none → failed
//   best-of-n       highest numeric `result.score`; ties → fewer tokens when cost_aware, then the
//                   faster report, then manifest order
//   chain           the last stage's result (each stage already got the previous one as input)
import { canonicalJson } from '../protocol/canonical-json.ts';
import type { Strategy } from './plan.ts';

export interface PeerReport {
  peer: string;
  status: 'completed' | 'failed' | 'partial';
  result: unknown;
  token_usage?: number;
  duration_ms?: number;
}

export type Aggregated = { ok: true; result: unknown } | { ok: false; why: string; data?: unknown };

const isPlainObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** `reports` are the usable (completed or partial) ones, in manifest order. */
export function aggregate(strategy: Strategy, reports: PeerReport[], costAware = false): Aggregated {
  if (reports.length === 0) return { ok: false, why: 'no peer produced a result' };
  switch (strategy) {
    case 'merge': {
      const results = reports.map((r) => r.result);
      return { ok: true, result: results.every(isPlainObject) ? Object.assign({}, ...results) : results };
    }
    case 'leader-decides':
      return { ok: true, result: { reports: reports.map((r) => ({ peer: r.peer, status: r.status, result: r.result })) } };
    case 'majority-vote': {
      const votes = new Map<string, { result: unknown; peers: string[] }>();
      for (const r of reports) {
        const key = canonicalJson(r.result);
        const v = votes.get(key) ?? { result: r.result, peers: [] };
        v.peers.push(r.peer);
        votes.set(key, v);
      }
      const ranked = [...votes.values()].sort((a, b) => b.peers.length - a.peers.length);
      const top = ranked[0];
      if (top.peers.length * 2 > reports.length) return { ok: true, result: top.result };
      return { ok: false, why: `no majority among ${reports.length} results`, data: { votes: ranked.map((v) => ({ result: v.result, peers: v.peers })) } };
    }
    case 'best-of-n': {
      const score = (r: PeerReport) => (isPlainObject(r.result) && typeof r.result.score === 'number' && Number.isFinite(r.result.score) ? r.result.score : -Infinity);
      const best = reports
        .map((r, i) => ({ r, i }))
        .sort(
          (a, b) =>
            score(b.r) - score(a.r) ||
            (costAware ? (a.r.token_usage ?? Infinity) - (b.r.token_usage ?? Infinity) || 0 : 0) ||
            (a.r.duration_ms ?? Infinity) - (b.r.duration_ms ?? Infinity) ||
            a.i - b.i,
        )[0].r;
      return { ok: true, result: best.result };
    }
    case 'chain':
      return { ok: true, result: reports[reports.length - 1].result };
  }
}
