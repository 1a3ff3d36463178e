import { STATUS_CODES, maxHeaderSize } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { randomHex } from '../ids.js';

/**
 * Answers a request Node refused before Fastify saw it (headers too large, a malformed request
 * line, too slow) in the docs/api.md#responses envelope with an X-TraceId, as every other answer, instead of
 * Fastify's own body. The connection is closed: what follows on it cannot be trusted.
 */
export function answerClientError(log: FastifyBaseLogger) {
  return (error: Error & { code?: string }, socket: Duplex): void => {
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const { status, msg, param } = describe(error.code);
    const traceId = randomHex(12);
    log.info({ traceId, reason: error.code, status }, 'request refused before it was read');
    const body = JSON.stringify({ code: 'invalid_request', msg, data: { param } });
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-TraceId: ${traceId}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}

function describe(code: string | undefined): { status: number; msg: string; param: string } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    const limit = `${Math.floor(maxHeaderSize / 1024)} KiB`;
    return { status: 431, msg: `The request line and headers together are larger than ${limit}`, param: 'headers' };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, msg: 'The request was not received in time', param: 'request' };
  }
  return { status: 400, msg: 'The request is not valid HTTP/1.1', param: 'request' };
}
