import { Router, type NextFunction, type Request, type Response } from 'express';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { methodNotAllowed } from '../../domain/errors/domain-error';
import { BULL_BOARD_PATH } from '../routes/route-table';
import type { QueueRegistry } from './queue-registry';

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
  router.use(withoutExternalFonts);
  router.use(serverAdapter.getRouter() as Router);
  return router;
}

/** The board's page asks Google Fonts for a typeface; an admin page must not reach out to a CDN. */
const EXTERNAL_FONT_LINK = /<link[^>]*href="https:\/\/fonts\.googleapis\.com[^>]*>\s*/g;

/**
 * Serves the board's page without its external font stylesheet (it falls back to system fonts,
 * nothing else changes), so the page loads nothing from outside the service and its CSP can say so.
 * The board renders its page with `res.render` from its own sub-application; this wraps that call.
 */
function withoutExternalFonts(_req: Request, res: Response, next: NextFunction): void {
  const render = res.render.bind(res);
  res.render = ((view: string, options?: object) =>
    render(view, options ?? {}, (error: Error | null, html: string) => {
      if (error) return next(error);
      res.type('html').send(html.replace(EXTERNAL_FONT_LINK, ''));
    })) as Response['render'];
  next();
}
