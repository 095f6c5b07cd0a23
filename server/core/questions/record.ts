import { z } from "zod";
import { TRANSPORTS } from "../vocabulary";
import { QUESTION_KINDS, QUESTION_STATUSES, ZAnswers, ZQuestion } from "./schema";

/** A person as every transport names them: the display name with the email shown beside it (null: unknown). */
const ZPerson = z.object({ userId: z.string(), name: z.string().nullable(), email: z.string().nullable() });

/** A question as every transport shows it (Gateway methods, frames, tRPC). */
export const ZQuestionRecord = z.object({
  id: z.string(),
  kind: z.enum(QUESTION_KINDS),
  status: z.enum(QUESTION_STATUSES),
  questions: z.array(ZQuestion),
  answers: ZAnswers.nullable(),
  sessionId: z.string().nullable(),
  responseId: z.string().nullable(),
  requester: ZPerson,
  answeredBy: ZPerson.nullable(),
  answeredVia: z.enum(TRANSPORTS).nullable(),
  answeredAt: z.string().nullable(),
  expiresAt: z.string(),
  expiresAtMs: z.number().int(),
  createdAt: z.string(),
});
export type TQuestionRecord = z.infer<typeof ZQuestionRecord>;
