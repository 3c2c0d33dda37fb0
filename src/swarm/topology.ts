// Who gets a delegated task (spec §5.10 topologies). The manifest's agents[] decides who is a
// member and with which role; presence only says who is up. Choices (docs/swarm.md):
//   leader-worker  only a `leader` delegates, to one worker (never to a leader)
//   peer-to-peer   any member delegates to one other member
//   pipeline       the task runs through the members after this one, in manifest order (chain)
//   broadcast      every other member gets the task; results are aggregated
//   hierarchical   tiers are roles in order of first appearance; a task goes one tier down
//                  (and further down from there: ./node.ts)
// `majority-vote` and `best-of-n` need several answers, so they fan out to every candidate;
// `chain` runs the candidates one after another, each given the previous result.
import type { SwarmPlan } from './plan.ts';
import { roleOf } from './plan.ts';

export type Fanout = 'one' | 'all' | 'chain';

export interface Route {
  fanout: Fanout;
  /** Candidate identities in manifest order. */
  candidates: string[];
}

const LEADER = 'leader';

export function route(plan: SwarmPlan, self: string): Route | { refused: string } {
  const others = plan.members.filter((m) => m.identity !== self);
  const myRole = roleOf(plan, self);
  let fanout: Fanout = 'one';
  let candidates: string[];
  switch (plan.topology) {
    case 'leader-worker':
      if (myRole.toLowerCase() !== LEADER) return { refused: `in a leader-worker swarm only the leader delegates; this agent's role is "${myRole}"` };
      candidates = others.filter((m) => m.role.toLowerCase() !== LEADER).map((m) => m.identity);
      break;
    case 'peer-to-peer':
      candidates = others.map((m) => m.identity);
      break;
    case 'pipeline': {
      const i = plan.members.findIndex((m) => m.identity === self);
      candidates = plan.members.slice(i + 1).map((m) => m.identity);
      fanout = 'chain';
      break;
    }
    case 'broadcast':
      candidates = others.map((m) => m.identity);
      fanout = 'all';
      break;
    case 'hierarchical': {
      const tiers = [...new Set(plan.members.map((m) => m.role))];
      const below = tiers[tiers.indexOf(myRole) + 1];
      candidates = below === undefined || !tiers.includes(myRole) ? [] : others.filter((m) => m.role === below).map((m) => m.identity);
      break;
    }
  }
  candidates = [...new Set(candidates)];
  if (plan.strategy === 'chain') fanout = 'chain';
  else if (fanout === 'one' && (plan.strategy === 'majority-vote' || plan.strategy === 'best-of-n')) fanout = 'all';
  return { fanout, candidates };
}
