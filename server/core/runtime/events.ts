/** Receives attempt events; may be sync or async. */
export type TAttemptObserver<TEvent> = (event: TEvent) => void | Promise<void>;

/** Where an observer failure is reported; `index` is the observer's position in the list. */
export type TObserverErrorReporter<TEvent> = (error: unknown, context: { event: TEvent; index: number }) => void;

/**
 * Delivers `event` to every observer in order. A throwing or rejecting observer is reported to
 * `onObserverError` and skipped; it never prevents delivery to the others and never rejects the
 * returned promise, which settles once every observer has finished.
 */
export function emitAttemptEvent<TEvent>(
  observers: readonly TAttemptObserver<TEvent>[],
  event: TEvent,
  onObserverError?: TObserverErrorReporter<TEvent>,
): Promise<void> {
  const report = (error: unknown, index: number): void => {
    try {
      onObserverError?.(error, { event, index });
    } catch {
      // The reporter is diagnostics only; its own failure must not reach the attempt either.
    }
  };
  const pending: Promise<void>[] = [];
  observers.forEach((observer, index) => {
    try {
      const result = observer(event);
      if (isPromiseLike(result)) pending.push(Promise.resolve(result).then(undefined, (error: unknown) => report(error, index)));
    } catch (error) {
      report(error, index);
    }
  });
  return pending.length === 0 ? Promise.resolve() : Promise.all(pending).then(() => undefined);
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}
