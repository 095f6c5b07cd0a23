/** Writes docs/agents.schema.json from the zod schema of the agents file (server/agents/file-config.ts). */
import { writeFileSync } from "node:fs";
import { agentsFileJsonSchema } from "../server/agents/file-config";

writeFileSync("docs/agents.schema.json", `${JSON.stringify(agentsFileJsonSchema(), null, 2)}\n`);
console.log("wrote docs/agents.schema.json");
