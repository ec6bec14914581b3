import http from 'node:http';
import https from 'node:https';
import { guardedLookup, targetRefusal } from './address-guard';

/**
 * One webhook POST (DESIGN §16): to a target checked by the private-network guard (at this very
 * request: the socket connects only to addresses its lookup validated), no redirects followed (a
 * 3xx is a failed attempt), the whole exchange bounded by WEBHOOK_TIMEOUT_MS and the receiver's
 * body read only up to RESPONSE_CAP_BYTES. A 2xx is delivered; anything else is a failure with a
 * reason fit for the delivery log.
 */

/** Bytes of a receiver's answer read (for the failure reason); the rest is dropped with the socket. */
export const RESPONSE_CAP_BYTES = 4096;

export const WEBHOOK_USER_AGENT = 'emapi-webhooks/1 (+Standard Webhooks)';

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface WebhookOutcome {
  delivered: boolean;
  statusCode: number | null;
  durationMs: number;
  /** Why the attempt failed (null when delivered). */
  error: string | null;
}

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 256 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 256 }),
};

/** Printable text of at most `max` characters from a receiver's bytes. */
function excerpt(bytes: Buffer, max = 200): string {
  const text = [...bytes.toString('utf8')]
    .map((c) => (c < ' ' || c === '\u007f' || c === '\ufffd' ? ' ' : c))
    .join('')
    .replace(/ +/g, ' ')
    .trim();
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export async function sendWebhook(request: WebhookRequest): Promise<WebhookOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { delivered: false, statusCode: null, durationMs: 0, error: 'the URL does not parse' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { delivered: false, statusCode: null, durationMs: 0, error: `refused: ${url.protocol} is not http(s)` };
  }
  // IP literals never reach the lookup below: judge them here. Names are judged by that lookup.
  if (/^[\d.]+$|^\[/.test(url.hostname)) {
    const refusal = await targetRefusal(url, request.allowPrivate);
    if (refusal) return { delivered: false, statusCode: null, durationMs: elapsed(), error: refusal };
  }
  const secure = url.protocol === 'https:';
  return new Promise<WebhookOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<WebhookOutcome, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, durationMs: elapsed() });
    };
    const req = (secure ? https : http).request(url, {
      method: 'POST',
      agent: secure ? agents.https : agents.http,
      lookup: guardedLookup(request.allowPrivate) as unknown as http.RequestOptions['lookup'],
      headers: {
        ...request.headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(request.body)),
        'user-agent': WEBHOOK_USER_AGENT,
      },
    });
    const timer = setTimeout(() => {
      finish({
        delivered: false,
        statusCode: null,
        error: `timed out after ${request.timeoutMs} ms (WEBHOOK_TIMEOUT_MS)`,
      });
      req.destroy();
    }, request.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      const refused = err.code === 'EWEBHOOKADDRESS';
      finish({
        delivered: false,
        statusCode: null,
        error: refused ? err.message : `${err.code ?? 'error'}: ${err.message}`.slice(0, 300),
      });
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      // A 2xx is the delivery: answered now, whatever the body does next (read to its end or the cap).
      if (status >= 200 && status < 300) finish({ delivered: true, statusCode: status, error: null });
      const done = () => {
        const text = excerpt(Buffer.concat(chunks));
        const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
        finish({ delivered: false, statusCode: status, error: `HTTP ${status}${redirect}${text ? `: ${text}` : ''}` });
      };
      // A body that never ends is cut at the deadline too (the socket is not kept for it).
      const cut = setTimeout(() => res.destroy(), request.timeoutMs);
      cut.unref();
      res.on('data', (chunk: Buffer) => {
        if (size >= RESPONSE_CAP_BYTES) return;
        chunks.push(chunk.subarray(0, RESPONSE_CAP_BYTES - size));
        size += chunk.length;
        if (size >= RESPONSE_CAP_BYTES) {
          done();
          res.destroy(); // the rest is never read
        }
      });
      res.on('end', done);
      res.on('error', done);
      res.on('close', () => {
        clearTimeout(cut);
        done();
      });
    });
    req.end(request.body);
  });
}
