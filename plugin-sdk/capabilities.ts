import type { THostAuthorityCapabilities } from "./authority";
import type { THostMediaCapabilities } from "./media";
import type { TClassifyTerminalOutcome, TMessageInjectionV2, TReportOutputTokens } from "./runtime";

/**
 * The versioned capabilities a harness attempt receives (`hostCapabilities`); every call after
 * settlement fails closed. server/host/capabilities.ts builds them.
 */
export type THostCapabilities = {
  readonly version: 2;
  /** One call per completed model response with that response's output tokens. */
  reportOutputTokens: TReportOutputTokens;
  /** Structured, non-secret facts for the trajectory; the host attributes, bounds, redacts and persists them. */
  trajectory: { recordEvent: (type: string, data: Record<string, unknown>) => void; flush: () => Promise<void> };
  classifyTerminalOutcome: TClassifyTerminalOutcome;
  /** Guarded active-run injection (steering) of this run. */
  messageInjectionV2: TMessageInjectionV2;
  /** Input attachments (context, staging) and reply attachments (server/host/media). */
  media: THostMediaCapabilities;
} & THostAuthorityCapabilities;
