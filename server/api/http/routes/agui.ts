import { handleAgui } from "../agui";
import { AGUI_EVENT, AGUI_RUN_INPUT } from "../openapi";
import { defineRoute, type TAuthedCtx } from "../route";

/** Runs or resumes over the AG-UI protocol (the body is AG-UI's RunAgentInput, parsed by handleAgui). */
async function runAgui({ deps, req, res, actor, credential }: TAuthedCtx): Promise<void> {
  await handleAgui(deps, req, res, actor, credential);
}

export const aguiRoute = defineRoute({
  method: "POST",
  path: "/v1/agui",
  auth: true,
  docs: {
    operationId: "runAgui",
    summary: "Run or resume over the AG-UI protocol",
    body: AGUI_RUN_INPUT,
    responses: { 200: { description: "AG-UI events as SSE", sse: AGUI_EVENT } },
    errors: [403, 404, 409],
  },
  handle: runAgui,
});
