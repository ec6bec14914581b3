import { createHmac } from 'node:crypto';

/**
 * `npm run token -- --role User [--sub alice] [--ttl 1h]`: prints a token signed with AUTH_SECRET
 * for the local HS256 setup, valid for AUTH_AUDIENCE and AUTH_ISSUER. Only the token goes to
 * stdout, so `TOKEN=$(npm run -s token -- --role Admin)` works.
 */

const USAGE = `usage: npm run -s token -- --role <User|Admin|none> [--sub <subject>] [--ttl <30s|15m|1h|7d>]

Prints a bearer token for the API's local shared-secret mode. The API and this command must see the
same settings, for example:

  export AUTH_SECRET=$(openssl rand -hex 32) AUTH_AUDIENCE=emapi AUTH_ISSUER=http://localhost/
  npm start                                   # real tokens now, mock authentication is off
  TOKEN=$(npm run -s token -- --role User --sub alice)
  curl -H "Authorization: Bearer $TOKEN" http://localhost:3000/Schemes`;

export class UsageError extends Error {}

export interface TokenRequest {
  roles: string[];
  subject: string;
  ttlSeconds: number;
}

export interface TokenSettings {
  secret: string;
  audience: string;
  issuer: string;
  alg: 'HS256' | 'HS384' | 'HS512';
  rolesClaim: string;
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

export function parseTtl(text: string): number {
  const match = /^([1-9][0-9]*)([smhd]?)$/.exec(text.trim());
  if (!match) throw new UsageError(`--ttl: '${text}' is not a duration like 30s, 15m, 1h or 7d`);
  return Number(match[1]) * UNIT_SECONDS[match[2] || 's']!;
}

export function parseArgs(argv: readonly string[]): TokenRequest | 'help' {
  const request: TokenRequest = { roles: [], subject: 'dev-user', ttlSeconds: 3600 };
  let roleGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return 'help';
    const value = argv[i + 1];
    if (!['--role', '--sub', '--ttl'].includes(arg)) throw new UsageError(`unknown argument '${arg}'`);
    if (value === undefined || value.startsWith('--')) throw new UsageError(`${arg} needs a value`);
    i++;
    if (arg === '--role') {
      if (!['User', 'Admin', 'none'].includes(value))
        throw new UsageError(`--role must be User, Admin or none, got '${value}'`);
      roleGiven = true;
      if (value !== 'none') request.roles.push(value);
    } else if (arg === '--sub') {
      if (value.trim() === '') throw new UsageError('--sub must not be blank');
      request.subject = value;
    } else {
      request.ttlSeconds = parseTtl(value);
    }
  }
  if (!roleGiven) throw new UsageError('--role is required (User, Admin, or none for a caller without a role)');
  return request;
}

export function settingsFromEnv(env: Record<string, string | undefined>): TokenSettings {
  const missing = ['AUTH_SECRET', 'AUTH_AUDIENCE', 'AUTH_ISSUER'].filter((name) => !env[name]);
  if (missing.length) {
    throw new UsageError(`${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set.`);
  }
  const alg = env.AUTH_TOKEN_SIGNING_ALG || 'HS256';
  if (alg !== 'HS256' && alg !== 'HS384' && alg !== 'HS512') {
    throw new UsageError(`AUTH_TOKEN_SIGNING_ALG must be HS256, HS384 or HS512 for shared-secret tokens, got '${alg}'`);
  }
  return {
    secret: env.AUTH_SECRET!,
    audience: env.AUTH_AUDIENCE!,
    issuer: env.AUTH_ISSUER!,
    alg,
    rolesClaim: env.AUTH_ROLES_CLAIM || 'roles',
  };
}

const HMAC: Record<TokenSettings['alg'], string> = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' };

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** A compact JWS (RFC 7515) over the claims, signed with HMAC as the settings say. */
export function signToken(request: TokenRequest, settings: TokenSettings, now = Date.now()): string {
  const iat = Math.floor(now / 1000);
  const claims: Record<string, unknown> = {
    iss: settings.issuer,
    aud: settings.audience,
    sub: request.subject,
    iat,
    exp: iat + request.ttlSeconds,
    [settings.rolesClaim]: request.roles,
  };
  const signingInput = `${base64url({ alg: settings.alg, typ: 'JWT' })}.${base64url(claims)}`;
  const signature = createHmac(HMAC[settings.alg], settings.secret).update(signingInput).digest('base64url');
  return `${signingInput}.${signature}`;
}

function main(): number {
  try {
    const request = parseArgs(process.argv.slice(2));
    if (request === 'help') {
      console.log(USAGE);
      return 0;
    }
    const settings = settingsFromEnv(process.env);
    if (Buffer.byteLength(settings.secret) < 32) {
      console.error(
        '[token] warning: AUTH_SECRET is shorter than 32 bytes; use a longer one outside a quick local test',
      );
    }
    console.log(signToken(request, settings));
    return 0;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`[token] ${err.message}\n\n${USAGE}`);
    return 2;
  }
}

if (require.main === module) process.exitCode = main();
