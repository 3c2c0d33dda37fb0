// The validator's answer (FemtoClaw §10 step 6: accept or reject). Steps and reason codes are
// stable strings: telemetry, the audit log and `claw protocol check` report them verbatim, and
// docs/femtoclaw.md lists every one.
import type { ArgumentIssue } from '../tools/json-schema.ts';
import type { StrictJsonCode } from '../protocol/strict-json.ts';

/** §10 steps 1–5 (step 6 is the verdict itself). */
export type ValidationStep = 'parse' | 'structure' | 'form' | 'capability' | 'arguments';

export type RejectReason =
  // step 1, parse: the strict JSON codes, plus the two shapes models get wrong most
  | StrictJsonCode
  | 'code_fence' // the answer starts with ``` (markdown), rejected, never unwrapped
  | 'text_around_json' // prose before the JSON
  // step 2, structure
  | 'not_object'
  | 'no_form'
  | 'both_forms'
  | 'unknown_field'
  | 'several_tool_calls' // a native tool-calling response held more than one call (agent loop, docs/femtoclaw.md)
  // step 3, form
  | 'form_not_object'
  | 'missing_field'
  | 'wrong_type'
  | 'empty_content'
  // step 4, capability
  | 'invalid_tool_name'
  | 'unknown_tool'
  // step 5, arguments
  | 'args_schema';

export type Verdict =
  | { valid: true; form: 'message'; content: string }
  | { valid: true; form: 'tool_call'; tool: string; args: Record<string, unknown> }
  | Rejection;

export interface Rejection {
  valid: false;
  step: ValidationStep;
  reason: RejectReason;
  /** One line, from fixed text, field names and the tool name only: never an argument or content value. */
  detail: string;
  /** The form, once step 2 has identified it. */
  form?: 'message' | 'tool_call';
  /** The requested tool, once step 3 has read a string there (may be unregistered). */
  tool?: string;
  /** The offending field's JSON pointer (`/tool_call/argz`) for structure and form failures. */
  field?: string;
  /** Parse failures: where (see StrictJsonResult.pos). */
  pos?: number;
  /** Argument failures: each failing path and keyword (bounded). */
  issues?: ArgumentIssue[];
}

export type Accepted = Exclude<Verdict, Rejection>;
