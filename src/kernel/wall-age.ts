// The age of a wall-clock stamp read back from disk (an audit segment's name, a transport file's name, a
// persisted dedup record), when the wall clock may have stepped since it was written. Boards without an RTC
// start at 1970 or at fake-hwclock's last save and step to the real time when NTP first answers; `date -s`
// or a bad NTP server can step it back (docs/boards.md "Clock"). Measured as `now - stamp`, a stamp
// written minutes before a forward step looks years old (retention deletes it, a replay window closes)
// and one written before a backward step looks fresh for as long as the step.
//
// The rule: never older than the monotonic clock says. The process notes the wall-minus-monotonic offset
// each time it looks; a change larger than STEP_MS starts a new epoch. A stamp that falls inside an epoch's
// wall range was written in that epoch, and its age is monotonic now minus the monotonic time it stands
// for (the smallest such age when ranges overlap after a backward step). Any other stamp was written before
// this process: aged by the wall clock, except one from before CLOCK_SET_FLOOR_MS (written by a clock not
// yet set, so of unknown age), which is taken as old as this process's uptime. A stamp in the future is fresh.
import type { Clock } from './ports.ts';

/** No clock that was set reads earlier than this on a board running this runtime: 2025-01-01T00:00:00Z. */
export const CLOCK_SET_FLOOR_MS = 1_735_689_600_000;
/** NTP slews offsets below 128 ms and steps above; 2 s also tolerates a slow sampling of a slew. */
const STEP_MS = 2_000;
/**
 * How far outside an epoch's wall range a stamp may fall and still belong to it. The wall and monotonic clocks
 * are read one after the other and the wall clock in whole ms, so their difference jitters by a few ms between
 * reads (measured up to 4 ms early in a Node process), and a slew moves it by up to STEP_MS within an epoch: a
 * stamp written just after a look could land before the range and, after a later step, be aged by the step.
 */
const EDGE_MS = STEP_MS;
/** Steps remembered; the oldest epoch is forgotten first (its stamps are then aged by the wall clock). */
const MAX_EPOCHS = 16;

/**
 * One epoch: [wall - monotonic during it (tracks a slew), monotonic start (the last look before the step that
 * began it), monotonic end (the look that saw the next step, or the latest look)].
 */
type Epoch = [offset: number, from: number, to: number];

export class WallAges {
  private readonly epochs: Epoch[];
  private readonly started: number;

  constructor(private readonly clock: Pick<Clock, 'now' | 'monotonic'>) {
    const m = clock.monotonic();
    this.started = m;
    this.epochs = [[clock.now() - m, m, m]];
  }

  /** Look at the clock: each look bounds when a step happened, so the more often the tighter. */
  private look(): [wall: number, mono: number] {
    const m = this.clock.monotonic();
    const w = this.clock.now();
    const e = this.epochs;
    const cur = e[e.length - 1];
    if (Math.abs(w - m - cur[0]) > STEP_MS) {
      e.push([w - m, cur[2], m]);
      if (e.length > MAX_EPOCHS) e.shift();
    } else cur[0] = w - m;
    cur[2] = m;
    return [w, m];
  }

  /** A function giving the age (ms, >= 0) of a wall stamp as of now: one look for a batch of stamps. */
  ages(): (stampMs: number) => number {
    const [w, m] = this.look();
    const uptime = m - this.started;
    return (s) => {
      let age = Infinity;
      for (const [o, from, to] of this.epochs) if (s >= from + o - EDGE_MS && s <= to + o + EDGE_MS) age = Math.min(age, m - s + o);
      return Math.max(0, age < Infinity ? age : s < CLOCK_SET_FLOOR_MS ? uptime : w - s);
    };
  }

  /**
   * For stores that delete below one stamp: the highest `c` such that every stamp written by this process
   * below `c` is at least `ageMs` old. Stamps from before this process are aged by the wall clock here,
   * including unset-clock ones (see ages()).
   */
  cutoff(ageMs: number): number {
    const [w, m] = this.look();
    let c = w - ageMs;
    for (const [o, from, to] of this.epochs) if (Math.max(from, m - ageMs) <= to) c = Math.min(c, Math.max(from, m - ageMs) + o);
    return c;
  }
}
