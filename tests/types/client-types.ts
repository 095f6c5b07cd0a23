/**
 * A type-level test (checked by `npx tsc --noEmit`): the TypeScript client package writes the
 * wire types out (it depends on nothing of the server), and these checks fail to compile when
 * they drift from the zod schemas the server validates with. `Same` holds both ways; `Reads`
 * holds where the client is deliberately wider than the server (an error code the client reads
 * as any string, so a newer server's code does not break an older client).
 */
import type { z } from "zod";
import type * as Client from "../../clients/ts/src/types";
import type { ZApprovalList } from "../../server/api/http/external-approvals";
import type { ZLiveServerFrame } from "../../server/api/http/live-frames";
import type { ZCreatedEnvelope, ZCreateResponseBody, ZDecided } from "../../server/api/http/v1-schemas";
import type { ZDecisionBody } from "../../server/core/decision";
import type { ZEnvelope } from "../../server/core/envelope";
import type { ZAttachmentInput } from "../../server/core/media";
import type { ZQuestionRecord } from "../../server/core/questions/record";
import type { ZAnswers, ZQuestion } from "../../server/core/questions/schema";
import type { ZStreamFrame } from "../../server/core/wire-frames";
import type { ZExternalApproval, ZExternalApprovalBody } from "../../server/services/external-approvals";
import type { ZRequestParams } from "../../server/services/questions/request-question";
import type { ZResolveParams } from "../../server/services/questions/resolve-question";
import type { ZWaitParams } from "../../server/services/questions/wait-answer";

/** `any` on either side would make every check pass: it fails them instead. */
type IsAny<T> = 0 extends 1 & T ? true : false;
type Reads<Server, Client> = true extends IsAny<Server> | IsAny<Client> ? false : [Server] extends [Client] ? true : false;
type Same<A, B> = true extends IsAny<A> | IsAny<B> ? false : [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** What the client sends: the server's input type; what it reads: the server's output type. */
export const checks: {
  approvalRequest: Same<z.input<typeof ZExternalApprovalBody>, Client.TApprovalRequest>;
  approval: Same<z.output<typeof ZExternalApproval>, Client.TApproval>;
  decisionBody: Same<z.input<typeof ZDecisionBody>, Client.TDecisionBody>;
  decided: Same<z.output<typeof ZDecided>, Client.TDecided>;
  approvalListItem: Same<z.output<typeof ZApprovalList>["approvals"][number], Client.TApprovalListItem>;
  createResponseBody: Same<z.input<typeof ZCreateResponseBody>, Client.TCreateResponseBody>;
  attachmentInput: Same<z.input<typeof ZAttachmentInput>, Client.TAttachmentInput>;
  envelope: Same<z.output<typeof ZEnvelope>, Client.TEnvelope>;
  createdEnvelope: Same<z.output<typeof ZCreatedEnvelope>, Client.TCreatedEnvelope>;
  frame: Same<z.output<typeof ZStreamFrame>, Client.TFrame>;
  liveServerFrame: Reads<z.output<typeof ZLiveServerFrame>, Client.TLiveServerFrame>;
  questionInput: Same<z.input<typeof ZQuestion>, Client.TQuestionInput>;
  question: Same<z.output<typeof ZQuestion>, Client.TQuestion>;
  questionRecord: Same<z.output<typeof ZQuestionRecord>, Client.TQuestionRecord>;
  answers: Same<z.output<typeof ZAnswers>, Client.TAnswers>;
  questionRequest: Same<z.input<typeof ZRequestParams>, Client.TQuestionRequest>;
  questionWait: Same<z.input<typeof ZWaitParams>, Client.TQuestionWait>;
  questionResolve: Same<z.input<typeof ZResolveParams>, Client.TQuestionResolve>;
} = {
  approvalRequest: true,
  approval: true,
  decisionBody: true,
  decided: true,
  approvalListItem: true,
  createResponseBody: true,
  attachmentInput: true,
  envelope: true,
  createdEnvelope: true,
  frame: true,
  liveServerFrame: true,
  questionInput: true,
  question: true,
  questionRecord: true,
  answers: true,
  questionRequest: true,
  questionWait: true,
  questionResolve: true,
};
