import { errorSentence } from "../error-sentence";

type TProps = {
  count: number;
  pending: boolean;
  error: unknown;
  onDecide: (decision: "approve" | "deny") => void;
  onClear: () => void;
};

/** Approve or deny every bulk-selected request at once (never high risk). */
export function BulkBar({ count, pending, error, onDecide, onClear }: TProps) {
  return (
    <section className="bulk-bar" aria-label="Bulk decision" data-testid="bulk-bar">
      <strong>{count} selected</strong>
      <button type="button" className="btn btn-approve btn-small" disabled={pending} onClick={() => onDecide("approve")}>
        Approve selected
      </button>
      <button type="button" className="btn btn-deny btn-small" disabled={pending} onClick={() => onDecide("deny")}>
        Deny selected
      </button>
      <button type="button" className="btn btn-quiet btn-small" onClick={onClear}>
        Clear
      </button>
      <span className="muted small">High-risk requests are never decided in bulk.</span>
      {error ? (
        <span role="alert" className="error-text">
          {errorSentence(error, "decide")}
        </span>
      ) : null}
    </section>
  );
}
