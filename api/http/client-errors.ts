import { maxHeaderSize, type Server } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Requests Node's HTTP parser refuses before Express sees them (a request line and headers past
 * `--max-http-header-size`, malformed HTTP) get a problem body like every other client error
 * (DESIGN §8), instead of Node's bare status line: a caller whose `$filter` made the URL too long
 * learns which limit it met and the way around it.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A peer that went away, or a response already under way: nothing can be answered.
    if (err.code === 'ECONNRESET' || !socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const [status, title, detail] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [
            431,
            'Request Header Fields Too Large',
            `The request line and headers exceed ${maxHeaderSize / 1024} KiB (Node's --max-http-header-size). Send a long $filter or $search as a GET inside POST /$batch, or shorten it.`,
          ]
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout', 'The request was not received in time.']
          : [400, 'Bad Request', 'The request is not valid HTTP/1.1.'];
    const body = JSON.stringify({ type: 'about:blank', title, status, detail });
    socket.end(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
