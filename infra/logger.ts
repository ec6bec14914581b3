import pino, { type Logger } from 'pino';
import { isSecretParamName, redactUrl } from './redact-url';

type SerializedRequest = ReturnType<typeof pino.stdSerializers.req>;

/** pino's request serializer, with credentials in the query string redacted (DESIGN §13, redact-url.ts). */
function redactedRequest(req: Parameters<typeof pino.stdSerializers.req>[0]): SerializedRequest {
  const serialized = pino.stdSerializers.req(req) as SerializedRequest;
  if (typeof serialized.url === 'string') serialized.url = redactUrl(serialized.url);
  const query = serialized.query as Record<string, unknown> | undefined;
  if (query && typeof query === 'object') {
    const redacted: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(query)) {
      redacted[name] = isSecretParamName(name) ? '[redacted]' : value;
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
export function createLogger(component: string, level: string, destination?: pino.DestinationStream): Logger {
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
