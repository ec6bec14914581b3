import fc from 'fast-check';

/** Query parameter names the logs must redact (docs/limits.md, infra/redact-url.ts). */
export const SECRET_PARAM_NAMES = [
  'access_token',
  'id_token',
  'refresh_token',
  'token',
  'code',
  'client_secret',
  'secret',
  'password',
  'passwd',
  'api_key',
  'apikey',
  'api-key',
  'key',
  'sig',
  'signature',
  'X-Amz-Security-Token',
];

const hex = (code: number) => code.toString(16).padStart(2, '0');

/** One character written as itself, upper or lower case, or percent-encoded with either hex case. */
function spelling(char: string): fc.Arbitrary<string> {
  const code = char.charCodeAt(0);
  return fc.constantFrom(
    char.toLowerCase(),
    char.toUpperCase(),
    `%${hex(code)}`,
    `%${hex(code).toUpperCase()}`,
    `%25${hex(code)}`,
  );
}

/** A secret-like name as a hostile caller might spell it: any characters percent-encoded, cases changed, a NUL or `[]` after. */
export const secretNameSpelling: fc.Arbitrary<string> = fc
  .constantFrom(...SECRET_PARAM_NAMES)
  .chain((name) =>
    fc.tuple(
      fc.tuple(...[...name].map(spelling)).map((chars) => chars.join('')),
      fc.constantFrom('', '%00', '%00%00', '[]', '%5B%5D', '%01', '%7F'),
    ),
  )
  .map(([name, suffix]) => name + suffix);

/** A value distinctive enough that finding it in a log line means it leaked: 12+ characters, any text. */
export const secretValue: fc.Arbitrary<string> = fc
  .tuple(fc.stringMatching(/^[A-Za-z0-9]{12,24}$/), fc.string({ maxLength: 8 }))
  .map(([core, tail]) => `S3CR3T${core}${tail}`);

/** The part of a secret value that any spelling of it in a URL or a JSON log line still shows. */
export function secretCore(value: string): string {
  return value.match(/^S3CR3T[A-Za-z0-9]+/)![0];
}
