/** The kinds of pending action a run can wait on (one file each under server/host/pending/). */
export const PENDING_TYPES = ["approval", "client_tool", "question"] as const;
export type TPendingType = (typeof PENDING_TYPES)[number];

/**
 * What a `requires_action` run waits on, stored on the response itself: the kind, the pending
 * row's id and the tool call it answers. `hold` marks a question asked by a tool call that is
 * still running in its attempt (an MCP elicitation): its answer goes to that call, not to a resume.
 */
export type TPendingRef = { type: TPendingType; id: string; callId: string; hold?: boolean };
