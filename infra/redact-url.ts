/**
 * Credentials in query strings never reach a log in clear (DESIGN §13). A parameter is judged by
 * its name as a server could read it, not as written: percent-decoded (repeatedly, so `%2561` is
 * caught too), `+` as a space, case-folded, and with everything but letters and digits dropped, so
 * `%61ccess_token`, `access%5Ftoken`, `access_token%00`, `Access-Token` and `access_token[]` are all
 * `accesstoken`.
 */

/** Folded names that are secrets on their own (OAuth `code`, SAS `sig`, `key`, …). */
const SECRET_NAMES = new Set(['code', 'sig', 'key', 'pass', 'pwd', 'jwt', 'auth', 'otp', 'session', 'sessionid']);
/** Folded names holding any of these are secrets: `access_token`, `client_secret`, `X-Amz-Signature`, `api_key`, … */
const SECRET_PARTS = [
  'token',
  'secret',
  'passw',
  'apikey',
  'accesskey',
  'privatekey',
  'signature',
  'credential',
  'authorization',
];

const REDACTED = '[redacted]';
/** Rounds of percent-decoding tried on a name: beyond this it is judged as it then reads. */
const DECODE_ROUNDS = 4;

/**
 * The name as a server could read it, or undefined when its percent-encoding is malformed (then
 * what the API's tolerant decoder makes of it is not worth guessing). Further rounds only look
 * deeper: one that fails leaves the name as the round before read it.
 */
function decodedName(raw: string): string | undefined {
  let name = raw.replace(/\+/g, ' ');
  for (let round = 0; round < DECODE_ROUNDS && name.includes('%'); round++) {
    try {
      name = decodeURIComponent(name);
    } catch {
      return round === 0 ? undefined : name;
    }
  }
  return name;
}

/** Whether a (decoded) query parameter name carries a credential. */
export function isSecretParamName(name: string): boolean {
  const folded = name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
  return SECRET_NAMES.has(folded) || SECRET_PARTS.some((part) => folded.includes(part));
}

/** A name that shows nothing but itself once decoded (control characters aside): safe to log as written. */
const PLAIN_NAME = /^[\w.~$[\]\- ]*$/;

/**
 * A URL with the value of every credential-bearing query parameter replaced by `[redacted]`. A
 * secret-named parameter whose decoded name holds more than a name (an encoded `=` or `&`) is
 * replaced whole, and a query string with a name that cannot be decoded is replaced whole: what a
 * server reads from it cannot be known, so nothing of it is written.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const path = url.slice(0, start + 1);
  // Split on `;` as well as `&`: some servers and proxies read `;` as a separator.
  const pieces = url.slice(start + 1).split(/([&;])/);
  for (let i = 0; i < pieces.length; i += 2) {
    const piece = pieces[i]!;
    const equals = piece.indexOf('=');
    const rawName = equals < 0 ? piece : piece.slice(0, equals);
    const name = decodedName(rawName);
    if (name === undefined) return `${path}${REDACTED}`;
    if (!isSecretParamName(name)) continue;
    // eslint-disable-next-line no-control-regex
    if (!PLAIN_NAME.test(name.replace(/[\u0000-\u001f\u007f-\u009f]/g, ''))) pieces[i] = REDACTED;
    else if (equals >= 0) pieces[i] = `${rawName}=${REDACTED}`;
  }
  return path + pieces.join('');
}
