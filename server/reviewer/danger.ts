/** Why the rule reviewer denies a command. */
export type TDangerCategory = "destructive" | "exfiltration" | "privilege escalation" | "remote code" | "credential access" | "obfuscated";

/** One reason the rule reviewer found to deny a command: its category and a sentence a person can read. */
export type TDanger = { category: TDangerCategory; rationale: string };
