/** Writes docs/agents.schema.json and docs/mcp-servers.schema.json from their zod schemas (the single source). */
import { writeFileSync } from "node:fs";
import { agentsFileJsonSchema, mcpServersJsonSchema } from "../server/agents/file-config";

writeFileSync("docs/agents.schema.json", `${JSON.stringify(agentsFileJsonSchema(), null, 2)}\n`);
writeFileSync("docs/mcp-servers.schema.json", `${JSON.stringify(mcpServersJsonSchema(), null, 2)}\n`);
console.log("wrote docs/agents.schema.json and docs/mcp-servers.schema.json");
