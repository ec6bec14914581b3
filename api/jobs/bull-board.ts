import type { Router } from 'express';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { QueueRegistry } from './queue-registry';

export const BULL_BOARD_PATH = '/admin/queues';

/** Bull Board's UI and its API over every queue; mounted at BULL_BOARD_PATH behind AdminOnly. */
export function bullBoardRouter(queues: QueueRegistry): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  createBullBoard({ queues: queues.all().map((queue) => new BullMQAdapter(queue)), serverAdapter });
  return serverAdapter.getRouter() as Router;
}
