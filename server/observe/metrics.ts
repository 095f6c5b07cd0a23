import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Db, DbKind } from "../../db/client";
import { pendingApprovalCounts, pendingClientToolCounts, pendingQuestionCounts, runStatusCounts } from "../../db/repositories/observe";
import type { TMetricsPort } from "./port";

/** Seconds buckets from a tenth of a second to a week: people decide in seconds to days. */
const WAIT_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 86_400, 7 * 86_400];
/** Seconds buckets for an in-process resume: a millisecond to ten seconds. */
const RESUME_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

export type TMetrics = {
  port: TMetricsPort;
  /** The Prometheus text exposition of every metric (the gauges query the database now). */
  render: () => Promise<{ contentType: string; body: string }>;
};

/**
 * The process's metrics registry (one per app, never the global one). Pending work and runs by
 * status are gauges computed at scrape time with one grouped query each; events are counters and
 * histograms of this process.
 */
export function createMetrics(options: { db: Db; dbKind: DbKind; poolSize: number }): TMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const { db } = options;
  const gauge = <L extends string>(name: string, help: string, labelNames: L[], rows: () => Promise<Array<Record<L, string> & { n: number }>>) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        this.reset();
        for (const row of await rows()) {
          const labels = {} as Record<L, string>;
          for (const l of labelNames) labels[l] = row[l];
          this.set(labels, row.n);
        }
      },
    });
  gauge("countersign_pending_approvals", "Approvals waiting for a decision, by agent and risk", ["agent", "risk"], () => pendingApprovalCounts(db));
  gauge("countersign_pending_questions", "Questions waiting for an answer, by agent (\"\" for gateway questions outside a run)", ["agent"], () => pendingQuestionCounts(db));
  gauge("countersign_pending_client_tools", "Client-tool requests waiting for the client, by agent", ["agent"], () => pendingClientToolCounts(db));
  gauge("countersign_runs", "Runs (responses) by status", ["status"], () => runStatusCounts(db));
  const pool = new Gauge({ name: "countersign_db_pool_connections", help: "Database connections this process may open (PGlite: 1, in process)", labelNames: ["driver"], registers: [registry] });
  pool.set({ driver: options.dbKind }, options.dbKind === "pglite" ? 1 : options.poolSize);

  const decisions = new Counter({ name: "countersign_decisions_total", help: "Approvals settled by a person, by outcome and channel", labelNames: ["outcome", "channel"], registers: [registry] });
  const decisionTime = new Histogram({ name: "countersign_decision_seconds", help: "Time from an approval's request to its decision", labelNames: ["outcome"], buckets: WAIT_BUCKETS, registers: [registry] });
  const expiries = new Counter({ name: "countersign_expiries_total", help: "Pending approvals, client-tool requests and questions that expired, by kind", labelNames: ["kind"], registers: [registry] });
  const resume = new Histogram({ name: "countersign_resume_seconds", help: "From the transaction that settled a pending action to the resumed attempt running in this process", buckets: RESUME_BUCKETS, registers: [registry] });
  const attempts = new Counter({ name: "countersign_notification_attempts_total", help: "Notification delivery attempts, by channel", labelNames: ["channel"], registers: [registry] });
  const failures = new Counter({ name: "countersign_notification_failures_total", help: "Notification delivery attempts that failed, by channel", labelNames: ["channel"], registers: [registry] });
  const limited = new Counter({ name: "countersign_rate_limited_total", help: "Requests and frames refused with 429 by the rate limiter, by bucket", labelNames: ["bucket"], registers: [registry] });

  const port: TMetricsPort = {
    decided: ({ outcome, channel, waitedMs }) => {
      decisions.inc({ outcome, channel });
      decisionTime.observe({ outcome }, Math.max(0, waitedMs) / 1000);
    },
    expired: (kind) => expiries.inc({ kind }),
    resumed: (latencyMs) => resume.observe(Math.max(0, latencyMs) / 1000),
    notification: ({ channel, ok }) => {
      attempts.inc({ channel });
      if (!ok) failures.inc({ channel });
    },
    rateLimited: (bucket) => limited.inc({ bucket }),
  };
  return { port, render: async () => ({ contentType: registry.contentType, body: await registry.metrics() }) };
}
