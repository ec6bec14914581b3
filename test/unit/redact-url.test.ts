import test from 'ava';
import fc from 'fast-check';
import { redactUrl } from '../../infra/redact-url';
import { secretCore, secretNameSpelling, secretValue } from '../support/secret-params';

/** Query-string redaction by the decoded parameter name (infra/redact-url.ts). */

test('names are judged decoded, with NUL and case ignored: the spellings of issue 24 are redacted', (t) => {
  const cases: [string, string][] = [
    ['/Schemes?%61ccess_token=abc', '/Schemes?%61ccess_token=[redacted]'],
    ['/Schemes?access_token%00=abc', '/Schemes?access_token%00=[redacted]'],
    ['/Schemes?access%5Ftoken=abc', '/Schemes?access%5Ftoken=[redacted]'],
    ['/Schemes?ACCESS_TOKEN=abc&$top=1', '/Schemes?ACCESS_TOKEN=[redacted]&$top=1'],
    ['/Schemes?%2561ccess_token=abc', '/Schemes?%2561ccess_token=[redacted]'],
    ['/Schemes?password=hunter2&api_key=k', '/Schemes?password=[redacted]&api_key=[redacted]'],
    ['/Schemes?x=1;client_secret=s', '/Schemes?x=1;client_secret=[redacted]'],
    ['/x?X-Amz-Signature=abc&X-Amz-Credential=c', '/x?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]'],
    ['/x?sig=abc&code=c&key=k', '/x?sig=[redacted]&code=[redacted]&key=[redacted]'],
    ['/x?access_token=abc#frag', '/x?access_token=[redacted]'],
    // A name that holds more than a name once decoded is replaced whole.
    ['/x?access_token%3Dabc&$top=1', '/x?[redacted]&$top=1'],
    // Unparseable: the whole query string goes.
    ['/x?$top=1&%E0%A4%A=abc&access_token=abc', '/x?[redacted]'],
    ['/x?%zzaccess_token=abc', '/x?[redacted]'],
  ];
  for (const [url, logged] of cases) t.is(redactUrl(url), logged, url);
});

test('ordinary parameters are written as they are, malformed values included', (t) => {
  for (const url of [
    '/Schemes',
    '/Schemes?',
    "/Schemes?$top=2&$filter=SchemeName eq 'a%'&$orderby=Id",
    '/Schemes?$search=tower&searchFields=SchemeName&$skip=3',
    '/Companies?$select=Name,RegistrationNumber&keyword=x&author=y',
  ]) {
    t.is(redactUrl(url), url);
  }
});

test('property: whatever the spelling of a secret-like name, its value never reaches the line', (t) => {
  const others = fc.constantFrom('', '$top=1&', 'x=%41&', 'a=1;');
  fc.assert(
    fc.property(others, secretNameSpelling, secretValue, others, (before, name, value, after) => {
      const url = `/Schemes?${before}${name}=${encodeURIComponent(value)}${after ? `&${after}` : ''}`;
      const logged = redactUrl(url);
      t.false(logged.includes(secretCore(value)), `${url} → ${logged}`);
      t.true(logged.startsWith('/Schemes?'));
    }),
    { numRuns: 5000 },
  );
});
