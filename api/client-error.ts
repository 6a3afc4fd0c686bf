import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { ErrorCode } from '../domain/errors';
import { statusOf } from './errors';

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
const MALFORMED: Answer = {
  reason: 'Bad Request',
  code: 'MALFORMED_REQUEST',
  message: 'the request is not valid HTTP/1.1',
};

/** The raw response for a request the HTTP parser refused (exported for tests). */
export function clientErrorResponse(errorCode: string | undefined, requestId: string): string {
  const answer = (errorCode && ANSWERS[errorCode]) || MALFORMED;
  const body = JSON.stringify({ code: answer.code, message: answer.message, details: { requestId } });
  return [
    `HTTP/1.1 ${statusOf(answer.code)} ${answer.reason}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
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
}
