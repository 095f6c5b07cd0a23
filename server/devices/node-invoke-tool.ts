import { z } from "zod";
import type { TDeviceTool } from "../tools/types";
import { ZCommandName, ZNodeArgs } from "./protocol";

export const ZNodeInvokeArgs = z.strictObject({
  /** The device's id or name. */
  device: z.string().min(1).max(200),
  /** A named command of the device's allowlist (the device maps it to a shell command). */
  command: ZCommandName,
  args: ZNodeArgs.optional(),
  timeoutMs: z.number().int().min(1).max(600_000).optional(),
});
export type TNodeInvokeArgs = z.infer<typeof ZNodeInvokeArgs>;

/**
 * `node_invoke`: runs a named command on a paired device. Authorized without a prompt only for a
 * Full access session and a command the harness declared in `requiredNodeCommands`; otherwise a
 * person approves `node:<command>`. The device enforces its own allowlist, consent and policy.
 */
export const nodeInvokeTool: TDeviceTool = {
  kind: "device",
  name: "node_invoke",
  description: "Run a named command from a paired device's allowlist on that device.",
  argsSchema: ZNodeInvokeArgs,
};

/** The copy of a harness's declared node commands an attempt keeps; null when it declares none. */
export const snapshotNodeCommands = (agent: { requiredNodeCommands?: readonly string[] }): readonly string[] | null =>
  Array.isArray(agent.requiredNodeCommands) ? Object.freeze(agent.requiredNodeCommands.filter((c): c is string => typeof c === "string")) : null;
