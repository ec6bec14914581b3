/**
 * Where a write came from, carried with it through every process that handles it (DESIGN §15): in
 * the command (inside what the API signs, so nothing but the API can set it), in the outbox rows it
 * commits and in the event jobs that relay them. Workers put the request id in every log line of
 * the write; with tracing on, their spans join the request's trace.
 */
export interface WriteOrigin {
  /** The request's X-Request-Id (api/http/request-id.ts). */
  requestId: string;
  /** W3C trace context of the request's span (https://www.w3.org/TR/trace-context/), when tracing is on. */
  traceparent?: string;
  tracestate?: string;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * Whether `value` is an origin as the API makes it. Event jobs are not signed (DESIGN §13 signs
 * commands), so a worker takes an event job's origins only through this: a value written into
 * Redis by other means can at worst mislabel log lines and spans, never carry anything else.
 */
export function isWriteOrigin(value: unknown): value is WriteOrigin {
  if (value === null || typeof value !== 'object') return false;
  const { requestId, traceparent, tracestate } = value as Record<string, unknown>;
  return (
    typeof requestId === 'string' &&
    REQUEST_ID.test(requestId) &&
    (traceparent === undefined || isTraceContext({ traceparent, tracestate }))
  );
}

/** Whether `value` is a W3C trace context as a job carries it (`{ traceparent, tracestate? }`). */
export function isTraceContext(value: unknown): value is { traceparent: string; tracestate?: string } {
  if (value === null || typeof value !== 'object') return false;
  const { traceparent, tracestate } = value as Record<string, unknown>;
  return (
    typeof traceparent === 'string' &&
    TRACEPARENT.test(traceparent) &&
    (tracestate === undefined || (typeof tracestate === 'string' && tracestate.length <= 512))
  );
}
