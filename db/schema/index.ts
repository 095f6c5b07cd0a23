export * from "./actions";
export * from "./auth";
export * from "./responses";
export * from "./questions";
export * from "./steering";
export * from "./devices";
export * from "./grants";
export * from "./notifications";
