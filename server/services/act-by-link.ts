import { approvalOperation, approvalStatus, approvalWithAgent } from "../../db/repositories/approvals";
import { questionStatus, questionWithAgent } from "../../db/repositories/question-records";
import { linkRecipient } from "../../db/repositories/users";
import { actorOf } from "../auth/users";
import type { TActor } from "../core/actor";
import { DomainError } from "../core/errors";
import type { TAnswers, TQuestion } from "../core/questions/schema";
import type { TDeps, TRunDeps } from "../host/deps";
import { consumeLinkToken, peekLinkToken, releaseLinkToken, type TLinkToken } from "../notify/links";
import { approvalView, shownOperation } from "../notify/render";
import { decideApproval, type TDecideResult, type TDecision } from "./decide-approval";
import { checkDecisionShape } from "./decision-options";
import { resolveQuestion, type TResolveResult } from "./questions/resolve-question";

/** What a link page shows: the recipient, the link's expiry and the approval (redacted) or the question (never its answers). */
export type TLinkView = {
  /** Whom the link acts for: the display name with the email shown beside it. */
  recipient: { name: string; email: string };
  linkExpiresAt: string;
  subject:
    | {
        kind: "approval";
        id: string;
        status: string;
        agent: string | null;
        tool: string;
        action: string;
        risk: string;
        message: string;
        arguments: unknown;
        expiresAt: string;
        /** False when the arguments are not shown here in full (cut or hidden): then this page may deny or reply, never approve. */
        complete: boolean;
      }
    | { kind: "question"; id: string; status: string; agent: string | null; questions: TQuestion[]; expiresAt: string };
};

const gone = () => new DomainError("not_found", "What this link was for no longer exists. Sign in to the console to see what is waiting.");

/** Shows what a link is for, without using it up (link previews must not burn it). */
export async function getLinkView(deps: TDeps, token: string): Promise<TLinkView> {
  const row = await peekLinkToken(deps.db, token, deps.now());
  const user = await linkRecipient(deps.db, row.userId);
  if (!user) throw gone();
  const base = { recipient: { name: user.name, email: user.email }, linkExpiresAt: row.expiresAt.toISOString() };
  if (row.subjectKind === "approval") {
    const found = await approvalWithAgent(deps.db, row.subjectId);
    if (!found) throw gone();
    const view = approvalView({ ...found.approval, agent: found.agent });
    if (view.kind !== "approval") throw gone();
    const { kind: _kind, ...fields } = view;
    const complete = shownOperation(found.approval.action, found.approval.arguments).complete;
    return { ...base, subject: { kind: "approval", ...fields, status: found.approval.status, complete } };
  }
  const found = await questionWithAgent(deps.db, row.subjectId);
  if (!found) throw gone();
  const q = found.question;
  return { ...base, subject: { kind: "question", id: q.id, status: q.status, agent: found.agent ?? null, questions: q.questions, expiresAt: q.expiresAt.toISOString() } };
}

/**
 * Uses a link once, acting as its recipient. When the action fails and the approval or question
 * is still pending (e.g. an answer that does not fit), the link is given back: a refused attempt
 * changes nothing.
 */
async function withLink<T>(deps: TDeps, token: string, kind: "approval" | "question", act: (actor: TActor, row: TLinkToken) => Promise<T>): Promise<T> {
  const row = await consumeLinkToken(deps.db, token, kind, deps.now());
  try {
    const actor = await actorOf(deps.db, row.userId);
    if (!actor) throw gone();
    return await act(actor, row);
  } catch (error) {
    const now = kind === "approval" ? await approvalStatus(deps.db, row.subjectId) : await questionStatus(deps.db, row.subjectId);
    if (now === "pending") await releaseLinkToken(deps.db, row).catch(() => {});
    throw error;
  }
}

/**
 * Approves, denies or replies instead through a single-use link (`via: "link"`). Approving needs
 * the link's page to have shown the whole operation: arguments too long for it are approved in the
 * console (denying and replying stay possible here); the link is then given back.
 */
export function decideByLink(deps: TRunDeps, input: { token: string; decision: TDecision; message?: string }): Promise<TDecideResult> {
  return withLink(deps, input.token, "approval", async (actor, row) => {
    // A decision of the wrong shape is refused first, for what it is.
    checkDecisionShape(input);
    if (input.decision === "approve") {
      const found = await approvalOperation(deps.db, row.subjectId);
      if (found && !shownOperation(found.action, found.arguments).complete) {
        throw new DomainError("conflict", "This operation's arguments are not shown on this page in full (too long, or secret-looking values hidden), so it cannot be approved here: open it in the console to read all of it. Denying or replying works here.");
      }
    }
    return decideApproval(deps, actor, { approvalId: row.subjectId, decision: input.decision, via: "link", ...(input.message !== undefined ? { message: input.message } : {}) });
  });
}

/** Answers a question through a single-use link (`via: "link"`). */
export function answerByLink(deps: TRunDeps, input: { token: string; answers: TAnswers }): Promise<TResolveResult> {
  return withLink(deps, input.token, "question", (actor, row) => resolveQuestion(deps, actor, { id: row.subjectId, answers: input.answers, via: "link" }));
}
