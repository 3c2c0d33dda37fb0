// Cross-document checks: the rules a per-document JSON schema cannot express (references between
// primitives, mode/type-dependent fields, uniqueness across documents). Every issue points into
// the primitive that breaks the rule: `file = p.origin.file`, `segments = [...specPath, ...]`.
// All rules run and all issues are returned; nothing stops at the first. Names unique per kind
// are checked by the loader, not here. The rules, by id:
//
//   provider-secret-ref           §5.2   auth.secret_ref present but blank (missing: the schema's if/then)
//   provider-fallback-self        §5.2   fallback[].provider_ref names the provider itself
//   provider-fallback-cycle       §5.2   fallback chain loops through other providers
//   channel-access-control-field  §5.3   access_control field of another mode present (TV-L3-04/05)
//   channel-trigger-field         §5.3   cron/queue/imap/db-trigger need schedule/queue_name/mailbox/table
//   tool-composite-skill-ref      §5.4   composite: true without skill_ref
//   tool-mcp-uri-reserved         §5.4   mcp_source.uri uses the reserved mcp:// scheme
//   tool-composite-cycle          §5.4   composite tool → skill → ... → same composite tool
//   memory-store-name-duplicate   §5.6   two stores with one name
//   policy-rule-id-duplicate      §5.9   rule id repeated within or across policies
//   telemetry-exporter-endpoint   §5.11  otlp/webhook exporter without endpoint
//   telemetry-exporter-path       §5.11  file/sqlite exporter without path
//   sandbox-shell-rule            §5.8   blocked_patterns entry is not a regular expression
//   sandbox-mount-path            §5.8   mount_path inside /proc or /dev (the sandbox mounts its own)
//
// References (sandbox_ref, policy_ref, skill_ref, tools_required[], world_model_ref,
// memory_ref, constraints.policy_ref, backend.ref, embedding.provider_ref, fallback[].provider_ref,
// agents[].provider_ref, agents[].identity_ref) report one of, with the referring rule's section
// (or §7 for a malformed URI):
//   ref-invalid-uri  ref-invalid-name  ref-wrong-kind  ref-not-local  ref-unresolved  ref-version-mismatch
import type { RawIssue } from './issues.ts';
import type { ResolvedManifest } from './resolved.ts';
import { checkChannels } from './checks/channels.ts';
import { Checker } from './checks/context.ts';
import { checkMemory, checkWorldModels } from './checks/memory.ts';
import { checkPolicies } from './checks/policies.ts';
import { checkProviders } from './checks/providers.ts';
import { checkSwarm } from './checks/swarm.ts';
import { checkTelemetry } from './checks/telemetry.ts';
import { checkSkills, checkTools } from './checks/tools.ts';
import { checkSandboxes } from './checks/sandbox.ts';

/** `standalone`: `m` holds one primitive checked on its own; references get a syntax check only. */
export function crossCheck(m: ResolvedManifest, opts: { standalone?: boolean } = {}): RawIssue[] {
  const c = new Checker(m, opts.standalone);
  checkProviders(c);
  checkChannels(c);
  checkTools(c);
  checkSkills(c);
  checkMemory(c);
  checkWorldModels(c);
  checkPolicies(c);
  checkSandboxes(c);
  checkSwarm(c);
  checkTelemetry(c);
  return c.issues;
}
