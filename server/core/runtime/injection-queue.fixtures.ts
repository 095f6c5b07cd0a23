/** Shared fixtures for the injection queue tests. */
import type { TInjectionFailure, TInjectionItem, TInjectionSettlement } from "./injection-guard";
import { createInjectionQueue, type TInjectionQueueOptions } from "./injection-queue";

/** An assertion whose answer the test flips; counts its calls. */
export function source(initial = true) {
  const state = { current: initial, calls: 0 };
  const assertCurrent = () => {
    state.calls += 1;
    return state.current;
  };
  return { state, assertCurrent };
}

/** A V2 queue over a flippable live run that records dispatches and reported failures; drains only when told. */
export function setup(overrides: Partial<TInjectionQueueOptions> = {}) {
  const run = { live: true };
  const dispatched: TInjectionItem[] = [];
  const failures: TInjectionFailure[] = [];
  const queue = createInjectionQueue({
    isRunLive: () => run.live,
    dispatch: async (item) => void dispatched.push(item),
    autoDrain: false,
    onError: (failure) => failures.push(failure),
    ...overrides,
  });
  return { run, queue, dispatched, failures };
}

/** Queue options that record every onQueueAccepted and onQueueSettled call. */
export function callbacks() {
  const accepted: boolean[] = [];
  const settled: TInjectionSettlement[] = [];
  return { accepted, settled, options: { onQueueAccepted: (a: boolean) => void accepted.push(a), onQueueSettled: (s: TInjectionSettlement) => void settled.push(s) } };
}
