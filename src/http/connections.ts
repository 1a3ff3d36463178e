import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long a connection stays quiet before a stopping server takes it that no request is on its way. */
const quietMs = 500;

/**
 * The server's open connections, for a stop that resets no client's request (docs/operations.md,
 * "Stopping"). Once the process stops, every answer says `Connection: close` (http/server.ts): a
 * connection with a request under way closes after its answer, and its client knows not to send
 * on it again. A connection idle since an answer that still said keep-alive is another matter: its
 * client may be sending its next request at this very moment, and closing the connection then
 * resets that request (ECONNRESET). Node's own `closeIdleConnections`, which `server.close()` calls,
 * does just that, so it is replaced here: a connection is closed only once it has been quiet (no
 * request under way, no byte received) for half a second; a client sends its next request within
 * milliseconds, and one that comes later is answered, with `Connection: close`. A connection that
 * never sent a byte is quiet from its opening (a client's preconnect, or the one undici opens again
 * after an aborted event stream, which Node counts busy until its headers timeout: 60–90 s).
 */
export function trackConnections(server: Server) {
  /** Per connection: since when, and at how many bytes read, it is quiet; undefined while a request is under way. */
  const quiet = new Map<Socket, { since: number; bytesRead: number } | undefined>();
  server.on('connection', (socket: Socket) => {
    quiet.set(socket, { since: Date.now(), bytesRead: 0 });
    socket.once('close', () => quiet.delete(socket));
  });
  server.on('request', (request, response) => {
    const socket = request.socket;
    quiet.set(socket, undefined);
    response.once('close', () => {
      if (quiet.has(socket)) quiet.set(socket, { since: Date.now(), bytesRead: socket.bytesRead });
    });
  });
  const closeQuiet = (): void => {
    const now = Date.now();
    for (const [socket, state] of quiet) {
      if (state && now - state.since >= quietMs && socket.bytesRead === state.bytesRead) socket.destroy();
    }
  };
  server.closeIdleConnections = closeQuiet;
  return {
    /** Closes every connection quiet long enough that no request of its client is on its way. */
    closeQuiet,
  };
}
