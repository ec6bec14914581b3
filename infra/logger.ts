import pino, { type Logger } from 'pino';

/** Query-string parameters that carry credentials: never written to a log in clear. */
const SECRET_QUERY_PARAMS = /([?&](?:access_token|id_token|refresh_token|token|code|client_secret)=)[^&#]*/gi;

/** A URL with every credential-bearing query parameter's value replaced. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY_PARAMS, '$1[redacted]');
}

const SECRET_QUERY_NAMES = /^(?:access_token|id_token|refresh_token|token|code|client_secret)$/i;

type SerializedRequest = ReturnType<typeof pino.stdSerializers.req>;

/** pino's request serializer, with tokens in the query string redacted (DESIGN §13). */
function redactedRequest(req: Parameters<typeof pino.stdSerializers.req>[0]): SerializedRequest {
  const serialized = pino.stdSerializers.req(req) as SerializedRequest;
  if (typeof serialized.url === 'string') serialized.url = redactUrl(serialized.url);
  const query = serialized.query as Record<string, unknown> | undefined;
  if (query && typeof query === 'object') {
    const redacted: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(query)) {
      redacted[name] = SECRET_QUERY_NAMES.test(name) ? '[redacted]' : value;
    }
    (serialized as { query: unknown }).query = redacted;
  }
  return serialized;
}

/** Header paths whose values are credentials, in request lines and anywhere a header bag is logged. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'authorization',
];

/** One structured JSON logger per process; `component` names the process kind in every line. */
export function createLogger(
  component: string,
  level = process.env.LOG_LEVEL || 'info',
  destination?: pino.DestinationStream,
): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { component, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { req: redactedRequest, res: pino.stdSerializers.res, err: pino.stdSerializers.err },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

export type { Logger };
