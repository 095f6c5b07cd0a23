import { z } from "zod";
import { createReviewerChain } from "./chain";
import { createModelReviewer } from "./model-reviewer";
import { createRuleReviewer } from "./rule-reviewer";
import type { TExecReviewer } from "./types";

/** `off`: no reviewer (every exec asks a person); `rules`, `model`, or rules in front of the model. */
export const REVIEWER_MODES = ["off", "rules", "model", "rules+model"] as const;

/** Reviewer configuration, e.g. parsed from the environment by `reviewerConfigFromEnv`. */
export const ZReviewerConfig = z
  .strictObject({
    mode: z.enum(REVIEWER_MODES),
    workspaceRoot: z.string().min(1).optional(),
    trustRuleAllows: z.boolean().optional(),
    model: z
      .strictObject({
        baseURL: z.url({ protocol: /^https?$/ }),
        model: z.string().min(1),
        apiKey: z.string().min(1).optional(),
        timeoutMs: z.number().int().min(100).max(600_000).optional(),
        responseFormat: z.enum(["json_object", "json_schema", "none"]).optional(),
      })
      .optional(),
  })
  .refine((c) => !c.mode.includes("model") || c.model, { message: "A model reviewer needs a base URL and a model.", path: ["model"] });
export type TReviewerConfig = z.infer<typeof ZReviewerConfig>;

/**
 * Reads `COUNTERSIGN_REVIEWER` (a mode; default `rules+model` when a base URL is set, else `off`),
 * `COUNTERSIGN_REVIEWER_BASE_URL`, `…_MODEL`, `…_API_KEY`, `…_TIMEOUT_MS` and `…_RESPONSE_FORMAT`.
 * Throws a zod error naming the bad variable's path when the combination is invalid.
 */
export function reviewerConfigFromEnv(env: Readonly<Record<string, string | undefined>>): TReviewerConfig {
  const baseURL = env.COUNTERSIGN_REVIEWER_BASE_URL;
  const timeout = env.COUNTERSIGN_REVIEWER_TIMEOUT_MS;
  return ZReviewerConfig.parse({
    mode: env.COUNTERSIGN_REVIEWER ?? (baseURL ? "rules+model" : "off"),
    model: baseURL
      ? {
          baseURL,
          model: env.COUNTERSIGN_REVIEWER_MODEL,
          apiKey: env.COUNTERSIGN_REVIEWER_API_KEY || undefined,
          timeoutMs: timeout ? Number(timeout) : undefined,
          responseFormat: env.COUNTERSIGN_REVIEWER_RESPONSE_FORMAT || undefined,
        }
      : undefined,
  });
}

/** Builds the configured reviewer; null for `off`, which `reviewWithFallback` turns into `ask`. */
export function createConfiguredReviewer(config: TReviewerConfig): TExecReviewer | null {
  const rules = () => createRuleReviewer({ workspaceRoot: config.workspaceRoot });
  const model = () => {
    if (!config.model) throw new Error("A model reviewer needs a base URL and a model.");
    return createModelReviewer(config.model);
  };
  if (config.mode === "off") return null;
  if (config.mode === "rules") return rules();
  if (config.mode === "model") return model();
  return createReviewerChain([rules(), model()], { trustRuleAllows: config.trustRuleAllows });
}
