import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/api/trpc/root";

/** Shapes as the console receives them over tRPC (JSON, dates as ISO strings). */
type TOutputs = inferRouterOutputs<AppRouter>;
export type TApprovalRow = TOutputs["approvals"]["list"][number];
export type TResponseView = TOutputs["responses"]["get"];
export type TEnvelopeView = TResponseView["envelope"];
export type TOutputItemView = TEnvelopeView["output"][number];
export type TRequiredActionView = NonNullable<TEnvelopeView["requiredAction"]>;
export type TTrajectoryEvent = TResponseView["trajectory"][number];
export type TQuestionRecordView = TOutputs["question"]["get"]["question"];
export type TQuestionView = TQuestionRecordView["questions"][number];
export type TFormFieldView = NonNullable<TQuestionView["fields"]>[number];
