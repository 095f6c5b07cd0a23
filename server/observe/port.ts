import type { Tracer } from "@opentelemetry/api";

/** How a settled approval came out (a reply instead is a denial the run goes on with). */
export type TDecisionOutcome = "approved" | "denied" | "replied";

/**
 * What the host, services, notifier and rate limiter record: a small port, so none of them imports
 * the metrics library. The implementation is server/observe/metrics.ts (prom-client); counters and
 * histograms are per process.
 */
export type TMetricsPort = {
  /** An approval settled by a person: outcome, channel (transport) and how long it waited. */
  decided: (o: { outcome: TDecisionOutcome; channel: string; waitedMs: number }) => void;
  /** A pending approval, client-tool request or question expired. */
  expired: (kind: string) => void;
  /** A run resumed after a settlement: from the settling transaction to its attempt running again. */
  resumed: (latencyMs: number) => void;
  /** One notification delivery attempt on a channel, and whether it failed. */
  notification: (o: { channel: string; ok: boolean }) => void;
  /** A request or frame refused by the rate limiter (429). */
  rateLimited: (bucket: string) => void;
};

/** Observability handed to every part through deps: metrics, and the tracer (a no-op when tracing is off). */
export type TObserve = {
  metrics: TMetricsPort;
  tracer: Tracer;
  /** Whether spans are exported (OTLP endpoint configured); callers skip optional work when not. */
  tracing: boolean;
  /** The Prometheus text of every metric now (gauges query the database). */
  scrape: () => Promise<{ contentType: string; body: string }>;
};

/** A port that records nothing (CLI, embedders that want no metrics). */
export const NO_METRICS: TMetricsPort = {
  decided: () => {},
  expired: () => {},
  resumed: () => {},
  notification: () => {},
  rateLimited: () => {},
};
