// OTLP/HTTP JSON (opentelemetry-proto, logs signal): each event is one LogRecord whose body is the event
// name and whose attributes are the event's fields. Events are logs, not spans: a CKP event is a point in
// time with a result, and a logs pipeline accepts it without inventing trace ids.
import type { TelemetryEvent } from '../event.ts';

type AnyValue = { stringValue: string } | { boolValue: boolean } | { intValue: string } | { doubleValue: number };

function anyValue(v: unknown): AnyValue {
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (typeof v === 'string') return { stringValue: v };
  return { stringValue: JSON.stringify(v) ?? 'null' };
}

const attrs = (o: Record<string, unknown>) => Object.entries(o).filter(([, v]) => v !== undefined).map(([key, v]) => ({ key, value: anyValue(v) }));

export function toOtlpLogs(batch: TelemetryEvent[], service: { name: string; version?: string }) {
  return {
    resourceLogs: [
      {
        resource: { attributes: attrs({ 'service.name': service.name, 'service.version': service.version, 'telemetry.sdk.name': 'claw-edge' }) },
        scopeLogs: [
          {
            scope: { name: 'claw-edge' },
            logRecords: batch.map((e) => {
              const { event, timestamp, ...fields } = e;
              return {
                timeUnixNano: `${Date.parse(timestamp)}000000`,
                severityText: e.category === 'errors' ? 'ERROR' : 'INFO',
                severityNumber: e.category === 'errors' ? 17 : 9,
                body: { stringValue: event },
                attributes: attrs(fields),
              };
            }),
          },
        ],
      },
    ],
  };
}
