import test from 'ava';
import { ConfigError, loadConfig } from '../../domain/config/load-config';

const configWith = (env: Record<string, string>) =>
  loadConfig({ DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://x', COMMAND_SIGNING_KEY: 'k'.repeat(32), ...env });

test('EVENT_PUBLISH_WINDOW_MS: 25 ms by default, 0 (publish right after each command) allowed, negatives refused', (t) => {
  t.is(configWith({}).eventPublishWindowMs, 25);
  t.is(configWith({ EVENT_PUBLISH_WINDOW_MS: '0' }).eventPublishWindowMs, 0);
  t.is(configWith({ EVENT_PUBLISH_WINDOW_MS: '5' }).eventPublishWindowMs, 5);
  for (const bad of ['-1', '1.5', 'soon']) {
    t.throws(() => configWith({ EVENT_PUBLISH_WINDOW_MS: bad }), { instanceOf: ConfigError }, bad);
  }
});
