import { context, ProxyTracerProvider, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";

export type TTracing = { tracer: Tracer; enabled: boolean; shutdown: () => Promise<void> };

let contextManagerSet = false;

/** Whether the standard OTLP variables ask for traces (and the SDK is not disabled). */
export function tracingConfigured(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.OTEL_SDK_DISABLED === "true" || env.OTEL_TRACES_EXPORTER === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

const positiveInt = (raw: string | undefined, fallback: number): number => {
  const n = Number(raw);
  return raw && Number.isInteger(n) && n > 0 ? n : fallback;
};

/**
 * The process's tracer. With `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`
 * set, spans are batched and exported over OTLP/HTTP (JSON); the exporter reads the standard
 * variables itself (endpoint, `OTEL_EXPORTER_OTLP_HEADERS`, timeout). Otherwise the tracer is the
 * API's no-op: starting a span allocates nothing that is exported.
 */
export function createTracing(env: Readonly<Record<string, string | undefined>>): TTracing {
  if (!tracingConfigured(env)) return { tracer: new ProxyTracerProvider().getTracer("countersign"), enabled: false, shutdown: async () => {} };
  // The AI SDK parents its model-call spans on the active context: keep it across awaits.
  if (!contextManagerSet) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerSet = true;
  }
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME || "countersign", [ATTR_SERVICE_VERSION]: env.npm_package_version ?? "0.1.0" }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter(), {
        scheduledDelayMillis: positiveInt(env.OTEL_BSP_SCHEDULE_DELAY, 5000),
        maxExportBatchSize: positiveInt(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512),
        maxQueueSize: positiveInt(env.OTEL_BSP_MAX_QUEUE_SIZE, 2048),
      }),
    ],
  });
  return { tracer: provider.getTracer("countersign"), enabled: true, shutdown: () => provider.shutdown() };
}
