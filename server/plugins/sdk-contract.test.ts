import { describe, expectTypeOf, it } from "vitest";
import type * as Runtime from "../../plugin-sdk/runtime";
import type * as Sdk from "../../plugin-sdk/index";
import type * as Wire from "../../plugin-sdk/wire";
import type { TOutputItem, TAttachmentFailureReason } from "../core/envelope";
import type { TAttachmentFact } from "../core/media";
import type { TAnswers, TFormField, TQuestion } from "../core/questions/schema";
import type {
  classifyTerminalOutcome,
  TAssertCurrent,
  TInjectionAuthorityKind,
  TMessageInjectionV2,
  TQueueMessageOptions,
  TQueueMessageResult,
  TReportOutputTokens,
  TTerminalOutcome,
  TTerminalOutcomeInput,
  TToolResultMiddleware,
  TToolResultMiddlewareOptions,
} from "../core/runtime";
import type { TResponseStatus } from "../core/vocabulary";
import type { TPluginManifest } from "./manifest";

/*
 * The plugin SDK imports nothing of the server (docs/plugins.md), so it restates the server's
 * types its contract names (plugin-sdk/wire.ts, plugin-sdk/runtime.ts, the manifest). These
 * assertions are checked by the type check (`tsc`): a restated type that drifts from the server's
 * own definition fails it, naming the type.
 */
describe("the plugin SDK states the server's types exactly", () => {
  it("wire types: output items, statuses, questions, answers, attachments", () => {
    expectTypeOf<Wire.TResponseStatus>().toEqualTypeOf<TResponseStatus>();
    expectTypeOf<Wire.TOutputItem>().toEqualTypeOf<TOutputItem>();
    expectTypeOf<Wire.TAttachmentFact>().toEqualTypeOf<TAttachmentFact>();
    expectTypeOf<Wire.TAttachmentFailureReason>().toEqualTypeOf<TAttachmentFailureReason>();
    expectTypeOf<Wire.TFormField>().toEqualTypeOf<TFormField>();
    expectTypeOf<Wire.TQuestion>().toEqualTypeOf<TQuestion>();
    expectTypeOf<Wire.TAnswers>().toEqualTypeOf<TAnswers>();
  });

  it("attempt runtime types: usage, injection, terminal outcome, middleware", () => {
    expectTypeOf<Runtime.TReportOutputTokens>().toEqualTypeOf<TReportOutputTokens>();
    expectTypeOf<Runtime.TAssertCurrent>().toEqualTypeOf<TAssertCurrent>();
    expectTypeOf<Runtime.TInjectionAuthorityKind>().toEqualTypeOf<TInjectionAuthorityKind>();
    expectTypeOf<Runtime.TQueueMessageOptions>().toEqualTypeOf<TQueueMessageOptions>();
    expectTypeOf<Runtime.TQueueMessageResult>().toEqualTypeOf<TQueueMessageResult>();
    expectTypeOf<Runtime.TMessageInjectionV2>().toEqualTypeOf<TMessageInjectionV2>();
    expectTypeOf<Runtime.TTerminalOutcome>().toEqualTypeOf<TTerminalOutcome>();
    expectTypeOf<Runtime.TTerminalOutcomeInput>().toEqualTypeOf<TTerminalOutcomeInput>();
    expectTypeOf<Runtime.TClassifyTerminalOutcome>().toEqualTypeOf<typeof classifyTerminalOutcome>();
    expectTypeOf<Runtime.TToolResultMiddleware>().toEqualTypeOf<TToolResultMiddleware>();
    expectTypeOf<Runtime.TToolResultMiddlewareOptions>().toEqualTypeOf<TToolResultMiddlewareOptions>();
  });

  it("the manifest", () => {
    expectTypeOf<Sdk.TPluginManifest>().toEqualTypeOf<TPluginManifest>();
  });
});
