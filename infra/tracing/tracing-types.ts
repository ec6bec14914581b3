/** What the service asks of tracing (infra/tracing/tracing.ts), on or off. */

/** The W3C trace context of a span, as it rides in job data (https://www.w3.org/TR/trace-context/). */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

export interface SpanOptions {
  /** The remote parent: the span continues that trace. */
  parent?: TraceCarrier;
  /** Further traces the work belongs to (a burst of several writes' events). */
  links?: readonly TraceCarrier[];
  attributes?: Record<string, string | number | boolean>;
  /** The request id of the work's write (an `emapi.request_id` attribute, to find its trace by it). */
  requestId?: string;
  /** `consumer` for a job taken from a queue, `producer` for jobs added, `internal` otherwise. */
  kind?: 'consumer' | 'producer' | 'internal';
}

/** What the service asks of tracing; the no-op when tracing is off. */
export interface Tracing {
  readonly enabled: boolean;
  /** The context of the active span, to carry in a job; undefined when there is none (or tracing is off). */
  activeContext(): TraceCarrier | undefined;
  /** Runs `work` inside a new span; the span records a thrown error and ends when `work` settles. */
  inSpan<T>(name: string, options: SpanOptions, work: () => Promise<T>): Promise<T>;
  /** Names the active HTTP request's route (its server span's `http.route`, and its name): a route-table label. */
  nameRoute(route: string): void;
  /** Exports what is still buffered (before the process exits). */
  flush(): Promise<void>;
}
