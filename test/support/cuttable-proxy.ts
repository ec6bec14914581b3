import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy to a store (Redis, Postgres) that can drop every connection and refuse new ones, then come back;
 * can pass requests on while dropping Redis's answers (a connection dying mid-command); and can go silent,
 * passing nothing either way while every connection stays open (a store or network that no longer answers).
 */
export class CuttableProxy {
  private server = net.createServer((client) => this.pipe(client));
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  swallowReplies = false;
  /** Once a request containing this text passes, every reply is swallowed (swallowReplies turns on). */
  swallowRepliesAfter: string | undefined;
  /** Nothing passes either way; connections stay open. */
  silent = false;

  constructor(private readonly upstream: URL) {}

  private pipe(client: net.Socket): void {
    const upstream = net.connect(Number(this.upstream.port), this.upstream.hostname);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('data', (chunk: Buffer) => {
      if (this.silent) return;
      if (this.swallowRepliesAfter !== undefined && chunk.includes(this.swallowRepliesAfter))
        this.swallowReplies = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!this.swallowReplies && !this.silent) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  async open(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async cut(): Promise<void> {
    const closed = new Promise((resolve) => this.server.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
    this.server = net.createServer((client) => this.pipe(client));
  }
}
