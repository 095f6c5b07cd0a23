import { z } from "zod";

/** An IANA time zone name the runtime knows (e.g. `Europe/Berlin`); the database groups days by it. */
export const ZTimeZone = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z][A-Za-z0-9_+\-/]*$/, "Give an IANA time zone name such as Europe/Berlin.")
  .refine((zone) => {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: zone });
      return true;
    } catch {
      return false;
    }
  }, "Unknown time zone: give an IANA name such as Europe/Berlin.");

/** The calendar day (YYYY-MM-DD) of `at` in `timeZone`. */
export function dayIn(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(at);
}
