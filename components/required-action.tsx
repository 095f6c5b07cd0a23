import Link from "next/link";
import type { TRequiredActionView as TRequiredAction } from "./api-types";
import { RiskBadge } from "./badges";
import { JsonView } from "./json-view";
import { Countdown, formatTimestamp } from "./time-labels";

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
          <Link href={`/approvals?focus=${encodeURIComponent(action.id)}`} className="btn btn-primary" data-testid="decide-in-inbox">
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
      <div className="client-path" data-testid="client-tool-path">
        <div className="label">What the client must do</div>
        <ol className="small">
          <li>
            Run <code>{action.name}</code> with the arguments above.
          </li>
          <li>
            Submit its output before <time dateTime={action.expiresAt}>{formatTimestamp(action.expiresAt)}</time>: <code>POST /v1/client-tools/{action.id}</code> with the body{" "}
            <code>{'{"output": …}'}</code>
            {action.inputSchema ? " matching the schema below" : ""} (on <code>/v1/live</code>: a <code>client_tool.result</code> message with <code>requestId</code> <code>{action.id}</code>).
          </li>
          <li>After that time the request expires and the response ends with an error; nothing more can be submitted.</li>
        </ol>
        {action.inputSchema ? <JsonView value={action.inputSchema} label="output schema" collapsed /> : null}
      </div>
    </div>
  );
}
