import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/api/trpc/root";
import type { TDecisionOutcome } from "@/server/core/vocabulary";

/** Shapes as the console receives them over tRPC (JSON, dates as ISO strings). */
/** Every tRPC procedure's output type. */
export type TOutputs = inferRouterOutputs<AppRouter>;
type TInputs = inferRouterInputs<AppRouter>;
export type TApprovalRow = TOutputs["approvals"]["list"][number];
export type TInboxRow = TOutputs["inbox"]["list"]["rows"][number];
export type TInboxFilter = TInputs["inbox"]["list"];
export type TResponseView = TOutputs["responses"]["get"];
export type TResponseSummary = TOutputs["audit"]["response"];
export type TEnvelopeView = TResponseView["envelope"];
export type TOutputItemView = TEnvelopeView["output"][number];
export type TRequiredActionView = NonNullable<TEnvelopeView["requiredAction"]>;
export type TTrajectoryEvent = TResponseView["trajectory"][number];
export type TAuditEvent = TOutputs["audit"]["trajectory"]["events"][number];
export type TQuestionRecordView = TOutputs["question"]["get"]["question"];
export type TQuestionView = TQuestionRecordView["questions"][number];
export type TFormFieldView = NonNullable<TQuestionView["fields"]>[number];
export type TWaitingItem = TOutputs["console"]["waiting"]["items"][number];
export type TWaitingKind = TWaitingItem["kind"];
export type TAgentView = TOutputs["console"]["agents"][number];
export type TUsageRow = TOutputs["console"]["usage"][number];
type TActivityMessage = TOutputs["console"]["onActivity"] extends AsyncIterable<infer M> ? M : never;
type TActivityData = TActivityMessage extends { data: infer D } ? D : never;
export type TActivityEvent = Omit<Extract<TActivityData, { kind: "event" }>, "kind">;
type TDecisionOutcomes = TOutputs["analytics"]["outcomes"];
/** `analytics.outcomes` (totals and requests per day); its totals hold a count per outcome too (the schema builds those keys, so its type does not name them). */
export type TDecisionOutcomesView = Omit<TDecisionOutcomes, "totals"> & { totals: TDecisionOutcomes["totals"] & Record<TDecisionOutcome, number> };
/** `analytics.times`: the histogram and p50/p90 per approver, agent and action. */
export type TDecisionTimesView = TOutputs["analytics"]["times"]["decisionTimes"];
/** One row of `analytics.repeated`. */
export type TRepeatedRequestRow = TOutputs["analytics"]["repeated"]["repeated"][number];
/** One row of `analytics.expired`. */
export type TExpiredRequestRow = TOutputs["analytics"]["expired"]["expired"][number];
export type TDecisionRequestRow = TOutputs["analytics"]["requests"]["rows"][number];
export type TSuggestionView = TOutputs["policy"]["suggestions"][number];
export type TSimulationView = TOutputs["policy"]["simulate"];
