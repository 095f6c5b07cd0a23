export { Countersign, type TClientOptions, type TObtained, type TObtainOptions, type TRequireOptions } from "./client.js";
export { ApprovalDenied, ApprovalEdited, CountersignError } from "./errors.js";
export { LiveConnection } from "./live.js";
export type * from "./types.js";
