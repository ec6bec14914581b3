import test from 'ava';
import fc from 'fast-check';
import { DomainError } from '../../domain/errors/domain-error';
import { positionOfToken, tokenOfLsn } from '../../api/http/consistency';
import { lsnOfPosition, positionOfLsn } from '../../db/replicas/wal-position';

const half = fc.integer({ min: 0, max: 0xffffffff });
const lsn = fc.tuple(half, half).map(([hi, lo]) => `${hi.toString(16).toUpperCase()}/${lo.toString(16).toUpperCase()}`);

test('a token names exactly the WAL position it was made from, and positions compare as Postgres compares LSNs', (t) => {
  fc.assert(
    fc.property(lsn, lsn, (a, b) => {
      const pa = positionOfToken(tokenOfLsn(a));
      t.is(lsnOfPosition(pa), a);
      t.is(pa, positionOfLsn(a));
      const [ha, la] = a.split('/').map((x) => parseInt(x, 16));
      const [hb, lb] = b.split('/').map((x) => parseInt(x, 16));
      const numeric = ha! !== hb! ? Math.sign(ha! - hb!) : Math.sign(la! - lb!);
      const pb = positionOfToken(tokenOfLsn(b));
      t.is(pa > pb ? 1 : pa < pb ? -1 : 0, numeric);
    }),
  );
});

test('tokens are case-insensitive and trimmed; anything else is a 400 naming the header', (t) => {
  t.is(positionOfToken(' 16-b374d848 '), positionOfLsn('16/B374D848'));
  for (const bad of ['', '16/B374D848', '16-', '-1', '123456789-0', '0-123456789', 'x-1', '1-2-3']) {
    const error = t.throws(() => positionOfToken(bad), undefined, bad);
    t.regex(error!.message, /X-Consistency-Token/);
  }
});

test('any header value is a position or a 400 naming the header, never another error', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[0-9a-fA-F -]{0,20}$/)), (value) => {
      try {
        const at = positionOfToken(value);
        t.is(positionOfToken(tokenOfLsn(lsnOfPosition(at))), at, 'a position round-trips');
      } catch (err) {
        t.true(err instanceof DomainError, String(err));
        t.is((err as DomainError).kind, 'BadRequest');
        t.regex((err as Error).message, /X-Consistency-Token/);
      }
    }),
    { numRuns: 3000 },
  );
});
