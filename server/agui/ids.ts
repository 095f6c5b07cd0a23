/** AG-UI ids are unique per thread; Countersign's call and item ids are unique per response. */
export const aguiToolCallId = (responseId: string, callId: string): string => `${responseId}.${callId}`;

/** The AG-UI message id of a response's text (or reasoning) item. */
export const aguiMessageId = (responseId: string, itemId: string): string => `${responseId}.${itemId}`;
