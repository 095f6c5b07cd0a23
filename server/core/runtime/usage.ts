/** The usage event published once per accepted report. */
export type TOutputTokenUsageEvent = { outputTokens: number; totalOutputTokens: number };

/**
 * Reports one completed model response's output tokens (not a cumulative total). Returns true
 * when the report was counted and published; false when the count is invalid or the capability
 * is closed or superseded. It never throws.
 */
export type TReportOutputTokens = (outputTokens: number) => boolean;

/** Options for {@link createRunUsageAccumulator}. */
export type TRunUsageAccumulatorOptions = {
  /** Publishes the cumulative usage event (globally and to the run's observers). */
  publish: (event: TOutputTokenUsageEvent) => void;
  /** Receives a failure of `publish`; the tokens stay counted either way. */
  onPublishError?: (error: unknown) => void;
};

/** The lifecycle-scoped output-token total of one logical run, shared by its retries. */
export type TRunUsageAccumulator = {
  /**
   * Issues the reporting capability for the current attempt of the run. Issuing a new one (a
   * retry) supersedes the previous capability; the total continues.
   */
  capability: () => TReportOutputTokens;
  /** The run's cumulative output tokens so far. */
  totalOutputTokens: () => number;
  /** Releases the run at cleanup: every capability, current or later, rejects reporting. */
  close: () => void;
  isClosed: () => boolean;
};

/**
 * Creates the live output-token counter for one run. A closed or superseded capability rejects
 * reporting by returning false and publishing nothing, so a late callback from a finished or
 * retried attempt can neither throw into the harness nor inflate the run's total. Invalid counts
 * (not a positive safe integer) are rejected the same way.
 */
export function createRunUsageAccumulator(options: TRunUsageAccumulatorOptions): TRunUsageAccumulator {
  let total = 0;
  let generation = 0;
  let closed = false;

  return {
    capability() {
      generation += 1;
      const issuedFor = generation;
      return (outputTokens) => {
        if (closed || issuedFor !== generation) return false;
        if (!Number.isSafeInteger(outputTokens) || outputTokens <= 0) return false;
        if (!Number.isSafeInteger(total + outputTokens)) return false;
        total += outputTokens;
        try {
          options.publish({ outputTokens, totalOutputTokens: total });
        } catch (error) {
          try {
            options.onPublishError?.(error);
          } catch {
            // Diagnostics only; a reporting callback must never throw into the harness.
          }
        }
        return true;
      };
    },
    totalOutputTokens: () => total,
    close() {
      closed = true;
    },
    isClosed: () => closed,
  };
}
