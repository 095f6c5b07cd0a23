/**
 * The JSONL line of one trajectory event (the console's download and the CLI's `export`): who
 * caused it by id, and by name with the email beside it (as named at export time; null for the
 * system).
 */
export const trajectoryLine = (e: {
  responseId: string;
  seq: number;
  frameSeq: number | null;
  type: string;
  actorUserId: string | null;
  actorName?: string | null;
  actorEmail?: string | null;
  transport: string | null;
  createdAt: Date;
  data: unknown;
}): string =>
  JSON.stringify({
    responseId: e.responseId,
    seq: e.seq,
    frameSeq: e.frameSeq,
    type: e.type,
    actorUserId: e.actorUserId,
    actorName: e.actorName ?? null,
    actorEmail: e.actorEmail ?? null,
    transport: e.transport,
    createdAt: e.createdAt.toISOString(),
    data: e.data,
  });
