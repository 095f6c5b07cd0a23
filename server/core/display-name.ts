import { z } from "zod";

/** The longest display name, in UTF-16 code units as JavaScript counts them. */
export const DISPLAY_NAME_MAX = 100;

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
const CONTROL = /\p{Cc}/u;

/**
 * The key two display names are compared by: names with the same key are one name, and no two
 * users who are not deleted share one (a unique index on `users.name_key`). The rule, in order:
 *
 * 1. invisible characters (Unicode Default_Ignorable_Code_Point: zero-width spaces and joiners,
 *    soft hyphens, variation selectors…) are removed;
 * 2. Unicode NFKC: compatibility forms become their plain letters (fullwidth `Ａ` is `A`, `ﬁ` is
 *    `fi`) and a letter with combining marks becomes its composed form (`e` + U+0301 is `é`);
 * 3. lower case (`String.prototype.toLowerCase`, the same in every locale: `I` is `i`, the Turkish
 *    dotted `İ` is `i` + U+0307 and stays apart from `i`, the dotless `ı` stays itself), then NFKC
 *    again, since lower-casing can leave a form NFKC changes; repeated until nothing changes;
 * 4. runs of white space become one space, and none leads or trails.
 *
 * Computed in JavaScript, not with PostgreSQL's `normalize()`, so PGlite and PostgreSQL agree.
 */
export function displayNameKey(name: string): string {
  let key = name.replace(IGNORABLE, "").normalize("NFKC");
  for (let i = 0; i < 4; i++) {
    const next = key.toLowerCase().normalize("NFKC");
    if (next === key) break;
    key = next;
  }
  return key.replace(/\s+/gu, " ").trim();
}

/**
 * A display name as given by a person (the CLI, the console): trimmed, at most 100 characters,
 * no control characters, and at least one visible character (a non-empty key).
 */
export const ZDisplayName = z
  .string()
  .trim()
  .min(1, "A display name cannot be empty.")
  .max(DISPLAY_NAME_MAX, `A display name has at most ${DISPLAY_NAME_MAX} characters.`)
  .refine((name) => !CONTROL.test(name), "A display name cannot hold control characters (line breaks, tabs…).")
  .refine((name) => displayNameKey(name) !== "", "A display name needs at least one visible character.");
