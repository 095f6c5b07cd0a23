/**
 * What starts a claimed run in this process (types only): the services settle pending actions and
 * resume runs through it, so they never import the host itself (server/host/host.ts implements it).
 */
import type { SpanContext } from "@opentelemetry/api";
import type { TResponseRow } from "../../db/repositories/responses";
import type { responseSteps } from "../../db/schema";

/** A run a transaction moved back to executing and claimed (lease) for this process's host. */
export type TClaimedRun = {
  row: TResponseRow;
  /** Tool calls the claiming transaction marked "running" with this claim run in this attempt. */
  claim: string;
  steps: Array<typeof responseSteps.$inferSelect>;
  /** Whether steering messages were queued when it was claimed (later ones are announced on the bus). */
  steeringQueued: boolean;
  /** The session's workspace, when the claiming transaction read it. */
  workspaceDir?: string;
  /** When the transaction that settled a pending action resumed it (ms since epoch): the resume latency metric. */
  resumedAt?: number;
  /** The span of the decision that resumed it, in this process: the resumed run's span links to it. */
  resumedBy?: SpanContext;
};

/** What starts a claimed run in this process (the host); services never import the host itself. */
export type TRunStarter = {
  id: string;
  startClaimed: (run: TClaimedRun) => void;
  /** False when the agent's harness keeps steering and answers in the run owner's profile (`supportsCrossProfileSteering: false`). */
  crossProfileSteering?: (agent: string) => boolean;
  /** True when the agent's harness answers side questions (plugin API 1.2). */
  answersSideQuestions?: (agent: string) => boolean;
};
