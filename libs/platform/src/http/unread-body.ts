import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * The most of a refused request's body read and thrown away after its answer: a whole upload past the 20 MB limit
 * (with its multipart overhead) and then some. A body declared larger is not read at all.
 */
export const UNREAD_BODY_DISCARD_BYTES = 32 * 1024 * 1024;

/** Connections whose answer is sent while the rest of their request's body is being thrown away. */
const discarding = new WeakSet<Duplex>();

/** Whether the connection has an answer out while its request's body is still arriving (see answerUnreadRequest). */
export function isDiscardingBody(socket: Duplex): boolean {
  return discarding.has(socket);
}

/**
 * Answers a request whose body has not been read to its end (refused before it was read: too large, over the upload
 * budget, unauthenticated, rate limited), so that every client reads the answer. Closing at once after the answer
 * is not enough: the kernel answers the bytes still arriving with a reset, and a client that writes its whole body
 * before it reads (Node's fetch) meets the reset, not the answer. So the answer is sent whole (its Content-Length
 * known) with `Connection: close`, then the rest of the body is read and thrown away (nothing is kept), and the
 * connection closes once the body has ended or the client has gone: at most UNREAD_BODY_DISCARD_BYTES, within the
 * server's request timeout (HTTP_REQUEST_TIMEOUT_SECONDS, after which Node closes it). A body declared larger than
 * that is not worth reading: its connection closes right after the answer, as before.
 */
export function answerUnreadRequest(
  response: ServerResponse & { req: IncomingMessage },
  status: number,
  body: string,
): void {
  const request = response.req;
  response.statusCode = status;
  response.setHeader('Connection', 'close');
  response.setHeader('Content-Length', Buffer.byteLength(body));
  const declared = Number(request.headers['content-length']);
  if (request.method === 'HEAD' || declared > UNREAD_BODY_DISCARD_BYTES) {
    response.end(request.method === 'HEAD' ? undefined : body);
    return;
  }
  // Written, but not ended: Node ends a `Connection: close` answer's connection as soon as the answer ends.
  response.write(body);
  discarding.add(request.socket);
  let discarded = 0;
  const close = () => {
    if (!response.writableEnded) response.end();
  };
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > UNREAD_BODY_DISCARD_BYTES) close();
  });
  request.once('end', close);
  request.once('close', close);
  request.resume();
}
