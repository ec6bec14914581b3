import type { Response } from 'express';

/**
 * Drops a response whose reader has stopped (DESIGN §13: a stalled export reader is dropped after
 * EXPORT_STALL_MS). A reader is stalled when the response has data waiting to be written and the
 * socket has accepted no byte for `stallMs`; a slow reader that keeps taking bytes is never cut.
 * Destroying the response ends the export's pipeline, which closes its cursor and frees its
 * connection and slot. Returns a function that stops watching.
 */
export function dropWhenStalled(res: Response, stallMs: number, onStall: () => void): () => void {
  const socket = res.socket;
  if (!socket) return () => undefined;
  let lastBytes = socket.bytesWritten;
  let lastProgress = Date.now();
  const timer = setInterval(
    () => {
      const now = Date.now();
      if (socket.bytesWritten !== lastBytes || !res.writableNeedDrain) {
        lastBytes = socket.bytesWritten;
        lastProgress = now;
        return;
      }
      if (now - lastProgress >= stallMs) {
        clearInterval(timer);
        onStall();
        res.destroy();
      }
    },
    Math.max(50, Math.min(5000, Math.floor(stallMs / 4))),
  );
  timer.unref();
  return () => clearInterval(timer);
}
