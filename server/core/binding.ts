import { createHash } from "node:crypto";

/** JSON with object keys sorted, so equal values always hash equally. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/** What an approval is bound to: a decision applies only while all of these still match. */
export type TApprovalBinding = {
  userId: string;
  sessionId: string;
  responseId: string;
  callId: string;
  action: string;
  arguments: unknown;
  cwd: string | null;
};

/** SHA-256 over the canonical binding; stored with the approval and recomputed before a decision and before execution. */
export const bindingHash = (binding: TApprovalBinding): string =>
  createHash("sha256").update(canonicalJson(binding)).digest("hex");

/** The binding hash of a stored approval (or of one with edited arguments): the fields it binds, nothing else. */
export const approvalBindingHash = (a: TApprovalBinding): string =>
  bindingHash({ userId: a.userId, sessionId: a.sessionId, responseId: a.responseId, callId: a.callId, action: a.action, arguments: a.arguments, cwd: a.cwd });
