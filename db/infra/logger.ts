import pino, { type Logger } from 'pino';

/** One structured JSON logger per process; `component` names the process kind in every line. */
export function createLogger(component: string, level = process.env.LOG_LEVEL || 'info'): Logger {
  return pino({
    level,
    base: { component, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { req: pino.stdSerializers.req, res: pino.stdSerializers.res, err: pino.stdSerializers.err },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
  });
}

export type { Logger };
