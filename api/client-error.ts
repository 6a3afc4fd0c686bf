import { randomUUID } from 'node:crypto';
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { ErrorCode } from '../domain/errors';
import { statusOf } from './errors';
import { DEFAULT_VERSION } from './versions';

// Requests Node refuses before Koa sees them (a request line or headers past --max-http-header-size, a
// malformed request, a client too slow to send its headers) would get Node's bare status line, or nothing.
// Answering them ourselves keeps the one error shape and a request id for the log, like every other answer.
interface Answer {
  reason: string;
  code: ErrorCode;
  message: string;
}
const ANSWERS: Record<string, Answer> = {
  HPE_HEADER_OVERFLOW: {
    reason: 'Request Header Fields Too Large',
    code: 'HEADERS_TOO_LARGE',
    message: 'the request line and headers exceed the server limit (16 KiB); shorten the URL or the headers',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    reason: 'Request Timeout',
    code: 'REQUEST_TIMEOUT',
    message: 'the request was not received in time',
  },
};
// CONNECT with a host and port (a proxy's tunnel) or any other target that is not a path: Node lets only CONNECT
// through with one, and the app has no path to route it by.
const TUNNEL: Answer = {
  reason: 'Bad Request',
  code: 'MALFORMED_REQUEST',
  message: 'this server is not a proxy: a CONNECT request must name a path it serves',
};
const MALFORMED: Answer = {
  reason: 'Bad Request',
  code: 'MALFORMED_REQUEST',
  message: 'the request is not valid HTTP/1.1',
};

/** The raw response for a request the HTTP parser refused (exported for tests). */
export function clientErrorResponse(errorCode: string | undefined, requestId: string): string {
  return rawErrorResponse((errorCode && ANSWERS[errorCode]) || MALFORMED, requestId);
}

function rawErrorResponse(answer: Answer, requestId: string): string {
  const body = JSON.stringify({ code: answer.code, message: answer.message, details: { requestId } });
  return [
    `HTTP/1.1 ${statusOf(answer.code)} ${answer.reason}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    // Every response names the version that served it (decisions.md, "Versioning"): none chose one, so the default.
    `X-Service-Version: ${DEFAULT_VERSION}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** Answers the HTTP server's `clientError`s in the API's error shape instead of Node's bare status line. */
export function answerClientErrors(server: Server, log: Logger): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A reset peer reads nothing; and once a response has started on this socket, another one would corrupt
    // it (Node's own rule, lib/_http_server.js socketOnError).
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    log.info({ requestId, code: err.code }, 'refused a malformed request');
    socket.end(clientErrorResponse(err.code, requestId));
  });
  server.on('connect', (req: IncomingMessage, socket: Socket) => answerConnect(server, req, socket));
}

/**
 * A CONNECT request is handed to the server's 'connect' listeners, and without one Node drops the connection: the
 * client saw a reset where any other method we do not serve gets its 401, 404 or 405 in the error shape. It goes to
 * the app like those, on a response of its own that closes the connection once written (no tunnel is ever opened).
 */
function answerConnect(server: Server, req: IncomingMessage, socket: Socket): void {
  socket.on('error', () => socket.destroy());
  if (!/^(\/|https?:\/\/)/i.test(req.url ?? '')) {
    socket.end(rawErrorResponse(TUNNEL, randomUUID()));
    return;
  }
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket);
  res.on('finish', () => {
    res.detachSocket(socket);
    socket.destroySoon();
  });
  server.emit('request', req, res);
}
