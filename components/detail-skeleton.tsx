/**
 * What a detail page (a response, a session, a question, a link) shows while it loads: grey lines
 * in the shape of a heading and its paragraphs, announced once as `label`, never the bare word.
 */
export function DetailSkeleton({ label, lines = 4 }: { label: string; lines?: number }) {
  return (
    <div className="skeleton detail-skeleton" role="status" aria-label={label} aria-busy="true" data-testid="detail-skeleton">
      <span className="skeleton-cell skeleton-heading" />
      {Array.from({ length: lines }, (_, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: placeholders have no identity
        <span key={i} className="skeleton-cell" style={{ width: `${92 - ((i * 17) % 40)}%` }} />
      ))}
    </div>
  );
}
