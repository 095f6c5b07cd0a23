export * from "./actions";
export * from "./auth";
export * from "./responses";
