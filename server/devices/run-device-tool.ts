import { agentSessionAccess } from "../../db/repositories/devices";
import type { TResponseRow } from "../../db/repositories/responses";
import { latestAccessGrants } from "../../db/repositories/session-access";
import type { TRisk } from "../core/vocabulary";
import type { TBaseDeps } from "../ports/deps";
import { RunRevokedError } from "../tools/process-cleanup";
import type { DeviceHub } from "./hub";
import type { TNodeInvokeArgs } from "./node-invoke-tool";
import { deviceById, findDevice, type TDeviceRow } from "./store";

/** What an approval for a node command shows and binds to (action `node:<command>`). */
export type TNodeApprovalTarget = {
  name: string;
  action: string;
  describe: (args: unknown, cwd: string | null) => string;
  risk: (args: unknown) => TRisk;
};

type TEvent = { type: "device.invoked" | "device.refused"; data: Record<string, unknown> };

/** What a device tool call needs from its attempt. */
export type TDeviceToolHost = {
  deps: Pick<TBaseDeps, "db"> & { devices: DeviceHub };
  response: TResponseRow;
  callId: string;
  signal: AbortSignal;
  /** The attempt's snapshot of the harness's declared node commands (null: none declared). */
  requiredNodeCommands: readonly string[] | null;
  /** The ordinary approval path: returns once approved, otherwise suspends or ends the attempt. */
  awaitApproval: (args: unknown, target: TNodeApprovalTarget) => Promise<void>;
  /** Records the call as running (a restarted process never runs it again); fails once the run settled. */
  markRunning: () => Promise<void>;
  /** Records the tool result the agent sees, with its trajectory event, in one step. */
  finish: (output: unknown, event: TEvent) => Promise<unknown>;
};

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * Runs one `node_invoke` call. Pairing, the harness declaration, the live session's access, the
 * device's allowlist, consent and local policy, and the run's revocation are each checked on
 * their own; the declaration only narrows what a Full access session may run without a prompt.
 */
export async function runDeviceTool(host: TDeviceToolHost, args: TNodeInvokeArgs): Promise<unknown> {
  const base = { callId: host.callId, device: args.device, command: args.command, args: args.args ?? [] };
  const refuse = (reason: string, message: string, extra: Record<string, unknown> = {}) =>
    host.finish(
      { error: message, reason, refusedBy: extra.refusedBy ?? "server" },
      { type: "device.refused", data: { ...base, reason, message, refusedBy: "server", ...extra } },
    );

  const device = await findDevice(host.deps.db, args.device);
  const unusable = describeUnusable(device, args.device);
  if (unusable || !device) return refuse(unusable?.reason ?? "unknown_device", unusable?.message ?? `Unknown device: ${args.device}.`);
  const named = { deviceId: device.id, deviceName: device.name };

  // Full access authorizes, without a prompt, only the exact commands the harness declared when
  // the attempt was created; everything else takes the ordinary approval path.
  const access = await agentSessionAccess(host.deps.db, host.response.sessionId);
  const declared = host.requiredNodeCommands?.includes(args.command) ?? false;
  let authorizedBy: "session_full" | "approval";
  // Who granted the Full access a command runs under goes into its trajectory frame.
  let fullAccess: { fullAccessGrantedBy: string | null; fullAccessGrantedAt: string } | null = null;
  if (access === "full" && declared) {
    authorizedBy = "session_full";
    const grant = (await latestAccessGrants(host.deps.db, [host.response.sessionId])).get(host.response.sessionId);
    if (grant) fullAccess = { fullAccessGrantedBy: grant.byUserId, fullAccessGrantedAt: grant.at };
  } else {
    await host.awaitApproval({ ...args, args: args.args ?? [], deviceId: device.id }, approvalTarget(device, args, host.requiredNodeCommands));
    authorizedBy = "approval";
  }

  await host.markRunning();
  // Re-read right before sending: the device may have been revoked while a person decided.
  const current = await deviceById(host.deps.db, device.id);
  const gone = describeUnusable(current, args.device);
  if (gone) return refuse(gone.reason, gone.message, named);
  const hub = host.deps.devices;
  if (!hub?.isOnline(device.id)) return refuse("offline", `Device ${device.name} is offline (not connected to this server); nothing was run.`, named);

  let outcome: Awaited<ReturnType<NonNullable<typeof hub>["invoke"]>>;
  try {
    outcome = await hub.invoke(device.id, { runId: host.response.id, command: args.command, args: args.args ?? [], timeoutMs: args.timeoutMs ?? DEFAULT_TIMEOUT_MS }, host.signal);
  } catch (error) {
    if (error instanceof RunRevokedError) return refuse("run_revoked", error.message, named);
    throw error;
  }
  if (outcome.kind === "offline") return refuse("offline", `Device ${device.name}: ${outcome.message} The command's outcome is unknown.`, named);
  if (outcome.kind === "refused") {
    return refuse(outcome.reason, `Device ${device.name} refused: ${outcome.message}`, { ...named, refusedBy: "device" });
  }
  const output: Record<string, unknown> = { exitCode: outcome.exitCode, stdout: outcome.stdout, stderr: outcome.stderr };
  if (outcome.timedOut) output.timedOut = true;
  if (outcome.cancelled) output.cancelled = true;
  if (outcome.truncated) output.truncated = true;
  return host.finish(output, {
    type: "device.invoked",
    data: { ...base, ...named, authorizedBy, ...fullAccess, exitCode: outcome.exitCode, timedOut: outcome.timedOut, cancelled: outcome.cancelled, durationMs: outcome.durationMs, marker: outcome.marker ?? null },
  });
}

/** Why a device cannot run anything, or null when it is paired. */
function describeUnusable(device: TDeviceRow | null, ref: string): { reason: string; message: string } | null {
  if (!device) return { reason: "unknown_device", message: `Unknown device: ${ref}. No device has that id or name.` };
  if (device.status === "pending") return { reason: "unpaired", message: `Device ${device.name} is not paired: its pairing token was never used.` };
  if (device.status === "revoked") return { reason: "revoked", message: `Device ${device.name}'s pairing was revoked; it can no longer run commands.` };
  return null;
}

/**
 * The approval of a node command. The approver also sees the commands the harness declared for
 * this attempt (`requiredNodeCommands`, snapshotted when it began): whether this one is among them.
 */
export function approvalTarget(device: TDeviceRow, args: TNodeInvokeArgs, declared: readonly string[] | null): TNodeApprovalTarget {
  const list = declared && declared.length > 0 ? declared.join(", ") : "none";
  const note = declared === null ? "" : declared.includes(args.command) ? ` The agent's harness declared this command (it declared: ${list}).` : ` The agent's harness did not declare this command (it declared: ${list}).`;
  return {
    name: "node_invoke",
    action: `node:${args.command}`,
    describe: () => `Run ${args.command}${args.args?.length ? ` ${JSON.stringify(args.args)}` : ""} on device ${device.name} (${device.id})?${note}`,
    risk: () => "medium",
  };
}
