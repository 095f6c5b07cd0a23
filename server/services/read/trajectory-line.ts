/** The JSONL line of one trajectory event (the console's download and the CLI's `export`). */
export const trajectoryLine = (e: { responseId: string; seq: number; frameSeq: number | null; type: string; actorUserId: string | null; transport: string | null; createdAt: Date; data: unknown }): string =>
  JSON.stringify({
    responseId: e.responseId,
    seq: e.seq,
    frameSeq: e.frameSeq,
    type: e.type,
    actorUserId: e.actorUserId,
    transport: e.transport,
    createdAt: e.createdAt.toISOString(),
    data: e.data,
  });
