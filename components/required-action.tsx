import Link from "next/link";
import type { TRequiredActionView as TRequiredAction } from "./api-types";
import { RiskBadge } from "./badges";
import { JsonView } from "./json-view";
import { Countdown } from "./time-labels";

/** What the response is waiting for: a human approval or a client-side tool. */
export function RequiredAction({ action }: { action: TRequiredAction }) {
  if (action.type === "human_approval") {
    return (
      <div className="card callout" data-testid="required-action">
        <div className="approval-head">
          <RiskBadge risk={action.risk} />
          <strong>
            Waiting for approval of <code>{action.action}</code>
          </strong>
          <Countdown iso={action.expiresAt} />
        </div>
        <p className="approval-message">{action.message}</p>
        {action.cwd ? (
          <p className="small">
            Working directory <code>{action.cwd}</code>
          </p>
        ) : null}
        <JsonView value={action.arguments} />
        <p>
          <Link href="/" className="btn btn-primary">
            Decide in the Approvals inbox
          </Link>
        </p>
      </div>
    );
  }
  if (action.type === "question") {
    return (
      <div className="card callout" data-testid="required-action">
        <div className="approval-head">
          <strong>Waiting for an answer</strong>
          <Countdown iso={action.expiresAt} />
        </div>
        <p className="small muted">The agent asked a person {action.questions.length === 1 ? "a question" : `${action.questions.length} questions`}.</p>
        <p>
          <Link href={`/answer/${action.id}`} className="btn btn-primary">
            Open the answer page
          </Link>
        </p>
      </div>
    );
  }
  return (
    <div className="card callout" data-testid="required-action">
      <div className="approval-head">
        <strong>
          Waiting for the client tool <code>{action.name}</code>
        </strong>
        <Countdown iso={action.expiresAt} />
      </div>
      <p className="small muted">
        The connected client runs this tool and submits its output; the response resumes when it does.
        {action.privateInput ? " Its private input reaches only the application handler." : ""}
      </p>
      <div className="label">Arguments</div>
      <JsonView value={action.arguments} />
    </div>
  );
}
