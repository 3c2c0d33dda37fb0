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

/** No clock that was set reads earlier than this on a board running this runtime. */
export const CLOCK_SET_FLOOR_MS = Date.UTC(2025, 0, 1);
/** NTP slews offsets below 128 ms and steps above; 2 s also tolerates a slow sampling of a slew. */
const STEP_MS = 2_000;
/** Steps remembered; the oldest epoch is forgotten first (its stamps are then aged by the wall clock). */
const MAX_EPOCHS = 16;

interface Epoch {
  /** wall - monotonic during the epoch (tracks a slew). */
  offset: number;
  /** Monotonic span: from the last look before the step that began it, to the look that saw the next step. */
  from: number;
  to: number;
}

export class WallAges {
  private readonly epochs: Epoch[];
  private readonly started: number;

  constructor(private readonly clock: Pick<Clock, 'now' | 'monotonic'>) {
    const mono = clock.monotonic();
    this.started = mono;
    this.epochs = [{ offset: clock.now() - mono, from: mono, to: mono }];
  }

  /** Look at the clock: each look bounds when a step happened, so the more often the tighter. */
  private look(): { wall: number; mono: number } {
    const mono = this.clock.monotonic();
    const wall = this.clock.now();
    const cur = this.epochs[this.epochs.length - 1];
    const offset = wall - mono;
    if (Math.abs(offset - cur.offset) > STEP_MS) {
      const last = cur.to;
      cur.to = mono;
      this.epochs.push({ offset, from: last, to: mono });
      if (this.epochs.length > MAX_EPOCHS) this.epochs.shift();
    } else {
      cur.offset = offset;
      cur.to = mono;
    }
    return { wall, mono };
  }

  /** A function giving the age (ms, >= 0) of a wall stamp as of now: one look for a batch of stamps. */
  ages(): (stampMs: number) => number {
    const { wall, mono } = this.look();
    const epochs = this.epochs.map((e) => ({ lo: e.from + e.offset, hi: e.to + e.offset, offset: e.offset }));
    const uptime = mono - this.started;
    return (s) => {
      let age = Infinity;
      for (const e of epochs) if (s >= e.lo && s <= e.hi) age = Math.min(age, mono - (s - e.offset));
      if (age === Infinity) age = s < CLOCK_SET_FLOOR_MS ? uptime : wall - s;
      return Math.max(0, age);
    };
  }

  /**
   * For stores that delete below one stamp: the highest `c` such that every stamp written by this process
   * below `c` is at least `ageMs` old. Stamps from before this process are aged by the wall clock here,
   * including unset-clock ones (see ages()).
   */
  cutoff(ageMs: number): number {
    const { wall, mono } = this.look();
    let c = wall - ageMs;
    for (const e of this.epochs) {
      const lo = Math.max(e.from + e.offset, mono + e.offset - ageMs);
      if (lo <= e.to + e.offset) c = Math.min(c, lo);
    }
    return c;
  }
}
