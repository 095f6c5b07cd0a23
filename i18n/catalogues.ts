import en from "../messages/en.json";
import zhCN from "../messages/zh-CN.json";
import type { TLocale } from "./locales";

/** The English catalogue is the reference: every other catalogue has exactly its keys. */
export type TMessages = typeof en;

/** Every catalogue, typed against English so that a missing key is a type error. */
export const CATALOGUES: Record<TLocale, TMessages> = { en, "zh-CN": zhCN };
