import { z } from "zod";

/**
 * The keyset part of a paginated list's input: `cursor` is the previous page's `nextCursor`
 * (absent or malformed: the first page), `limit` the rows per page. `direction` is sent by
 * tRPC's infinite queries; these lists page forward (older) only.
 */
export const pageInput = {
  cursor: z.string().max(400).nullish(),
  limit: z.number().int().min(1).max(200).default(50),
  direction: z.enum(["forward", "backward"]).optional(),
};

/** A paginated list that takes nothing but the page. */
export const ZPageOnly = z.strictObject(pageInput).default({ limit: 50 });
