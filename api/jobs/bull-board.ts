import { Router } from 'express';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { methodNotAllowed } from '../../domain/errors/domain-error';
import type { QueueRegistry } from './queue-registry';

export const BULL_BOARD_PATH = '/admin/queues';

/**
 * Bull Board's UI and its API over every queue; mounted at BULL_BOARD_PATH behind AdminOnly.
 * Read-only by default (DESIGN §13): the board's own per-queue read-only mode hides and refuses its
 * actions, and any request that is not a read is refused here as well, whatever route a board
 * version adds. BULL_BOARD_READ_ONLY=false allows them (retry, clean, pause, add).
 */
export function bullBoardRouter(queues: QueueRegistry, options: { readOnly: boolean; logoutPath?: string }): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    queues: queues.all().map((queue) => new BullMQAdapter(queue, { readOnlyMode: options.readOnly })),
    serverAdapter,
    // With the OIDC login (DESIGN §15) the board's header links to its logout.
    ...(options.logoutPath
      ? { options: { uiConfig: { miscLinks: [{ text: 'Log out', url: options.logoutPath }] } } }
      : {}),
  });
  const router = Router();
  if (options.readOnly) {
    router.use((req, _res, next) => {
      if (req.method === 'GET' || req.method === 'HEAD') return next();
      next(
        methodNotAllowed(`Bull Board is read-only (BULL_BOARD_READ_ONLY=true): ${req.method} is refused.`, [
          'GET',
          'HEAD',
        ]),
      );
    });
  }
  router.use(serverAdapter.getRouter() as Router);
  return router;
}
