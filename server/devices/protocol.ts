import { z } from "zod";

/**
 * The wire protocol of `WS /v1/devices/connect`, shared by the server and the device process.
 * A device first sends `pair` (one-time token) or `hello` (its credential); the server answers
 * `paired`/`ready` or `error` and closes. Then the server sends `invoke`, `cancel` and
 * `revoke_run`; the device answers each invoke with `started` (optional), then `result` or `refused`.
 */

export const DEVICE_PROTOCOL_VERSION = 1;

/** Close codes the device treats as final (it exits instead of reconnecting). */
export const CLOSE_AUTH_FAILED = 4401;
export const CLOSE_REVOKED = 4403;
export const CLOSE_REPLACED = 4409;

export const ZCommandName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "command names are letters, digits, dots, dashes and underscores");

export const ZDeviceName = z
  .string()
  .trim()
  .min(1, "name must not be empty")
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/, "device names are letters, digits, spaces, dots, dashes and underscores");

export const ZNodeArgs = z.array(z.string().max(4096)).max(64);

const ZDeclaration = {
  commands: z.array(ZCommandName).max(256),
  consent: z.enum(["allow", "deny"]),
  denyPatterns: z.number().int().min(0).max(1000),
  version: z.literal(DEVICE_PROTOCOL_VERSION),
};

/** The first frame a device sends. */
export const ZDeviceHello = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("pair"), token: z.string().min(1).max(200), ...ZDeclaration }),
  z.strictObject({ type: z.literal("hello"), deviceId: z.string().min(1).max(200), credential: z.string().min(1).max(200), ...ZDeclaration }),
]);
export type TDeviceHello = z.infer<typeof ZDeviceHello>;

/** Later frames from a device. */
export const ZDeviceFrame = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("started"), id: z.string().min(1).max(200), marker: z.string().max(64), pid: z.number().int() }),
  z.strictObject({
    type: z.literal("result"),
    id: z.string().min(1).max(200),
    exitCode: z.number().int().nullable(),
    stdout: z.string().max(1_000_000),
    stderr: z.string().max(1_000_000),
    timedOut: z.boolean(),
    cancelled: z.boolean(),
    truncated: z.boolean(),
    durationMs: z.number().min(0),
    marker: z.string().max(64).optional(),
  }),
  z.strictObject({
    type: z.literal("refused"),
    id: z.string().min(1).max(200),
    reason: z.enum(["not_allowlisted", "policy", "consent", "invalid", "run_revoked"]),
    message: z.string().max(2000),
  }),
]);
export type TDeviceFrame = z.infer<typeof ZDeviceFrame>;
export type TRefusalReason = Extract<TDeviceFrame, { type: "refused" }>["reason"];

/** Frames the server sends. */
export const ZServerFrame = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("paired"), deviceId: z.string(), name: z.string(), credential: z.string() }),
  z.strictObject({ type: z.literal("ready"), deviceId: z.string(), name: z.string() }),
  z.strictObject({ type: z.literal("error"), code: z.string(), message: z.string() }),
  z.strictObject({
    type: z.literal("invoke"),
    id: z.string(),
    runId: z.string(),
    command: z.string(),
    args: z.array(z.string()),
    timeoutMs: z.number().int().min(1),
  }),
  z.strictObject({ type: z.literal("cancel"), id: z.string() }),
  z.strictObject({ type: z.literal("revoke_run"), runId: z.string() }),
]);
export type TServerFrame = z.infer<typeof ZServerFrame>;
