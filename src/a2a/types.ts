// The CKP interop task model (CKP-A2A profile §6.3 states, §7 payloads): what claw.task.* returns and what the
// A2A binding projects (wire.ts).

/** Profile §6.3: 1:1 with A2A TaskState. */
export type TaskState = 'submitted' | 'working' | 'input_required' | 'auth_required' | 'completed' | 'failed' | 'canceled' | 'rejected';

export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set(['completed', 'failed', 'canceled', 'rejected']);

/** Profile §7: text, binary (base64), resource reference, structured JSON. */
export type TaskPart =
  | { type: 'text'; text: string; mediaType?: string }
  | { type: 'data'; data: unknown; mediaType?: string }
  | { type: 'url'; url: string; mediaType?: string }
  | { type: 'raw'; raw: string; mediaType?: string };

export interface TaskMessage {
  role: 'user' | 'agent';
  messageId: string;
  parts: TaskPart[];
  contextId?: string;
  taskId?: string;
}

export interface TaskArtifact {
  artifactId: string;
  name?: string;
  parts: TaskPart[];
}

export interface A2aTask {
  id: string;
  contextId: string;
  state: TaskState;
  /** Why it failed / was canceled: a short text for the status message (never internals). */
  statusMessage?: string;
  history: TaskMessage[];
  artifacts: TaskArtifact[];
  createdAt: number;
  updatedAt: number;
  /** The A2A caller's user id (a2a/access.ts); absent for the operator's tasks (claw.task.create). Never projected. */
  owner?: string;
  /** Refused before it ran, its first message kept as an excerpt only (tasks.ts): it can never run. Never projected. */
  excerpt?: boolean;
}
