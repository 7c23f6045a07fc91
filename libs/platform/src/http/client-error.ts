import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { isDiscardingBody } from './unread-body';

/**
 * Answers requests that Node's HTTP parser refuses before they reach the app (a malformed request line,
 * headers too large, garbage after a body, headers or a body that did not arrive within the server's timeouts) in
 * the spec's `{message}` shape instead of Node's bare 400, then
 * closes the connection, whose framing can no longer be trusted.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // An answer already sent (a refusal whose body was being thrown away) is not followed by another.
  if (error.code === 'ECONNRESET' || !socket.writable || isDiscardingBody(socket)) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message =
    status === 431
      ? 'The request headers are too large.'
      : status === 408
        ? 'The request was not received in time.'
        : 'The request is malformed.';
  const body = JSON.stringify({ message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
