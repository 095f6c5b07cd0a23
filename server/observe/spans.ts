import { type Attributes, type Context, context as otelContext, type Link, type Span, SpanKind, SpanStatusCode, trace, type Tracer } from "@opentelemetry/api";

/** Span and attribute names, one place (docs/operations.md lists them). */
export const SPAN = {
  run: "countersign.run",
  turn: "countersign.turn",
  toolCall: "countersign.tool_call",
  approvalWait: "countersign.approval.wait",
  decision: "countersign.decision",
  request: "countersign.http.request",
} as const;

/** Starts a child span of `parent` (the root context when none). */
export function startSpan(tracer: Tracer, name: string, parent: Context | undefined, attributes: Attributes, extra: { links?: Link[]; startTime?: Date; kind?: SpanKind } = {}): { span: Span; context: Context } {
  const base = parent ?? otelContext.active();
  const span = tracer.startSpan(name, { attributes, kind: extra.kind ?? SpanKind.INTERNAL, ...(extra.links ? { links: extra.links } : {}), ...(extra.startTime ? { startTime: extra.startTime } : {}) }, base);
  return { span, context: trace.setSpan(base, span) };
}

/**
 * Ends `span` exactly once with an outcome attribute (`countersign.outcome`); an error outcome
 * also sets the span's status. Later calls do nothing (an ended span no longer records; a no-op
 * span never does).
 */
export function endOnce(span: Span, outcome: string, error?: unknown): void {
  if (!span.isRecording()) return;
  span.setAttribute("countersign.outcome", outcome);
  if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  span.end();
}
