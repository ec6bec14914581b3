import type { Server } from 'node:http';
import { assertAuthConfigured, loadConfig } from '../infra/config/load-config';
import { createLogger } from '../infra/logger';
import { createApiRuntime } from './api-runtime';
import { answerClientErrors } from './http/client-errors';
import { exitOnSignals } from '../infra/shutdown';
import { isClusterPrimary, runClusterPrimary } from '../infra/cluster-primary';
import { primaryLogLevel, processCount } from '../infra/config/entry-point-config';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  const config = loadConfig();
  assertAuthConfigured(config.auth);
  const logger = createLogger('api', config.logLevel);
  if (config.auth.mock) {
    logger.warn(
      { role: config.auth.mockRole },
      `AUTH_MOCK is on: every request is treated as authenticated (role ${config.auth.mockRole}) without a token. Never use this in production; for real tokens set AUTH_ISSUER_BASE_URL (or AUTH_ISSUER + AUTH_JWKS_URI, or AUTH_ISSUER + AUTH_SECRET) and AUTH_AUDIENCE.`,
    );
  } else {
    const { issuerBaseURL, issuer, jwksUri, secret, audience, rolesClaim } = config.auth;
    const mode = issuerBaseURL ? 'issuer discovery' : secret ? 'local shared secret' : 'issuer + JWKS';
    logger.info(
      { mode, issuer: issuerBaseURL ?? issuer, jwksUri, audience, rolesClaim },
      `authentication: bearer tokens (${mode})`,
    );
  }
  if (config.bullBoardLogin) {
    const { issuer, clientId, clientSecret, publicUrl } = config.bullBoardLogin;
    logger.info(
      {
        issuer,
        clientId,
        client: clientSecret ? 'confidential' : 'public',
        redirectUri: `${publicUrl}/admin/queues/auth/callback`,
      },
      'Bull Board: OIDC login for browsers (bearer tokens still accepted)',
    );
  }
  // Writes go through the command queue: serve only once its producer and events reader are up.
  const runtime = await createApiRuntime(config, logger);
  const { app } = runtime;
  // With mock authentication anyone who can reach the port is an Admin: loopback only then.
  const server: Server = app.listen(config.port, config.listenHost, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    logger.info({ port, host: config.listenHost }, `API listening on http://${config.listenHost}:${port}`);
  });
  server.keepAliveTimeout = 65_000;
  answerClientErrors(server);

  exitOnSignals(logger, {
    what: 'in-flight requests',
    graceMs: SHUTDOWN_GRACE_MS,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Open GET /Changes streams never end by themselves: ended here, each says why.
      await runtime.endStreams();
      await closed;
      await runtime.close();
    },
  });
}

/** API_PROCESSES copies share the port under one primary (default: one process, no primary). */
function start(): Promise<void> {
  const processes = processCount('API_PROCESSES');
  if (processes > 1 && isClusterPrimary()) {
    runClusterPrimary(processes, createLogger('api-primary', primaryLogLevel()));
    return Promise.resolve();
  }
  return main();
}

start().catch((err: unknown) => {
  console.error(`[api] failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
