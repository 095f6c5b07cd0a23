import { parseDeviceArgs } from "./args";
import { runDevice } from "./device";

/** `npm run device -- --pair TOKEN --server URL --allow name=command ...`: a paired device process. */
const parsed = parseDeviceArgs(process.argv.slice(2));
if (!parsed.ok) {
  (parsed.help ? process.stdout : process.stderr).write(`${parsed.help ? "" : "countersign-device: "}${parsed.message}\n`);
  process.exit(parsed.help ? 0 : 2);
}
// The device runs its owner's declared commands with the environment its owner started it with.
runDevice(parsed.options, process.env).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`countersign-device: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
