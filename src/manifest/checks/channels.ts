// Channel rules, spec §5.3.
import type { Checker } from './context.ts';
import { describe, isObj, specOf } from './context.ts';

const S = '§5.3';

/** The one mode-specific access_control field each mode uses (§5.3 Access Control Modes table). */
const MODE_FIELD: Record<string, string | undefined> = {
  open: undefined,
  allowlist: 'allowed_ids',
  pairing: 'pairing',
  'role-based': 'roles',
};
const MODE_FIELDS = ['allowed_ids', 'pairing', 'roles'] as const;

/** Trigger field REQUIRED per event-driven channel type (§5.3 Event-Driven Trigger Semantics). */
const TRIGGER_FIELD: Record<string, string> = {
  cron: 'schedule',
  queue: 'queue_name',
  imap: 'mailbox',
  'db-trigger': 'table',
};

export function checkChannels(c: Checker): void {
  for (const ch of c.m.channels) {
    const spec = specOf(ch);
    if (!spec) continue;

    // "For allowlist mode, allowed_ids is REQUIRED and roles MUST NOT be present. For role-based
    // mode, roles is REQUIRED and allowed_ids MUST NOT be present. For pairing mode, pairing is
    // REQUIRED. Using the wrong field for a mode is a validation error." (TV-L3-04, TV-L3-05)
    // channel.schema.json enforces the REQUIRED halves (if/then) but not the MUST NOT halves, so
    // only the wrong-field half is checked here, for every mode (open uses none of the fields).
    const ac = spec.access_control;
    if (isObj(ac) && typeof ac.mode === 'string' && Object.hasOwn(MODE_FIELD, ac.mode)) {
      const own = MODE_FIELD[ac.mode];
      for (const field of MODE_FIELDS) {
        if (field === own || ac[field] === undefined) continue;
        const uses = own ? `'${ac.mode}' mode uses ${own}` : `'${ac.mode}' mode uses none of allowed_ids, pairing, roles`;
        c.report(ch, ['access_control', field], 'channel-access-control-field', S, `${describe(ch)}: access_control.${field} must not be present in '${ac.mode}' mode (${uses}; using the wrong field for a mode is a validation error)`);
      }
    }

    // "schedule: REQUIRED for type cron", queue_name for queue, mailbox for imap, table for
    // db-trigger. The schema has no type-dependent rule for these, so a cron channel without a
    // schedule would validate and never run.
    const field = typeof spec.type === 'string' && Object.hasOwn(TRIGGER_FIELD, spec.type) ? TRIGGER_FIELD[spec.type] : undefined;
    if (field !== undefined) {
      const trigger = spec.trigger;
      if (trigger === undefined || (isObj(trigger) && trigger[field] === undefined)) {
        c.report(ch, ['trigger', field], 'channel-trigger-field', S, `${describe(ch)}: type '${spec.type}' requires trigger.${field}`);
      }
    }
  }
}
