import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The server's open connections, for a stop that does not wait on connections that carry no
 * request. Node's `closeIdleConnections` closes kept-alive connections between requests, but counts
 * a connection that has not sent a byte yet as busy (its headers timeout runs: 60–90 s): a client's
 * preconnected socket, or the one an HTTP client opens again at once after a request it aborted
 * (undici does, after a server-sent event stream is cancelled). Such a connection held a stop for
 * that long. Closing it loses nothing: no request of it has begun.
 */
export function trackConnections(server: Server) {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    /** Closes every connection without a request under way: idle between requests, or never used. */
    closeUnused(): void {
      server.closeIdleConnections();
      for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
    },
  };
}
