/**
 * Vercel AI SDK (`ai` v6): a tool whose approval step is a Countersign approval.
 *
 * The SDK's own approval flow (`needsApproval`) stops `generateText` with a `tool-approval-request`
 * and expects the app to answer with a `tool-approval-response` in a second call; it cannot carry an
 * approver's edit. `withCountersign(tool, …)` instead moves the approval into the tool's `execute`:
 * when the tool's `needsApproval` says so (all calls when it has none), each call requests a
 * Countersign approval, waits for the decision, consumes it with its binding hash and runs the
 * tool with the approved (possibly edited) input. A denial does not run the tool: its result is
 * `{ denied: true, message }` with the approver's reply, which the model reads as the tool result.
 *
 *   const deploy = withCountersign(tool({ inputSchema: z.object({ command: z.string() }), execute: … }), { client, action: "exec" });
 *   await generateText({ model, tools: { deploy }, stopWhen: stepCountIs(3), prompt });
 */
import type { Tool, ToolExecutionOptions } from "ai";
import type { Countersign } from "../../clients/ts/src/index";
import { gated, type TGateOptions } from "./gate";

export type TDenied = { denied: true; message: string };

export type TAiSdkOptions<INPUT> = TGateOptions & {
  client: Countersign;
  /** The Countersign action (a tool name or action of the agent) whose policy applies, e.g. `exec`. */
  action: string;
  /** The action's arguments for this input (default: the input itself). */
  toArguments?: (input: INPUT) => Record<string, unknown>;
  /** The tool input for approved arguments (default: the arguments themselves). */
  fromArguments?: (args: Record<string, unknown>) => INPUT;
  /** What the approver reads (default: the action's own description). */
  message?: (input: INPUT) => string | undefined;
};

export function withCountersign<INPUT, OUTPUT>(tool: Tool<INPUT, OUTPUT>, options: TAiSdkOptions<INPUT>): Tool<INPUT, OUTPUT | TDenied> {
  const execute = tool.execute;
  if (!execute) throw new Error("withCountersign needs a tool with execute: Countersign gates running it.");
  const { needsApproval, ...rest } = tool;
  const toArguments = options.toArguments ?? ((input: INPUT) => input as Record<string, unknown>);
  const fromArguments = options.fromArguments ?? ((args: Record<string, unknown>) => args as INPUT);
  const run = async (input: INPUT, execution: ToolExecutionOptions): Promise<OUTPUT> => {
    const out = execute(input, execution);
    if (out && typeof out === "object" && Symbol.asyncIterator in out) throw new Error("withCountersign does not wrap streaming (async iterable) tools.");
    return (await out) as OUTPUT;
  };
  return {
    ...rest,
    execute: async (input: INPUT, execution: ToolExecutionOptions): Promise<OUTPUT | TDenied> => {
      const asks = typeof needsApproval === "function" ? await needsApproval(input, { toolCallId: execution.toolCallId, messages: execution.messages, experimental_context: execution.experimental_context }) : needsApproval !== false;
      if (!asks) return run(input, execution);
      const message = options.message?.(input);
      return gated(
        options.client,
        { action: options.action, arguments: toArguments(input), ...(message ? { message } : {}), idempotencyKey: `ai-sdk:${execution.toolCallId}` },
        (args) => run(fromArguments(args), execution),
        (reply): TDenied => ({ denied: true, message: reply }),
        options,
      );
    },
  } as Tool<INPUT, OUTPUT | TDenied>;
}
