// The Temporal client of the API and the CLI (the worker builds its own on the worker's connection).
import { Client } from '@temporalio/client';
import { DefaultLogger, IllegalStateError, LogLevel, NativeConnection, Runtime } from '@temporalio/worker';

/**
 * A client on the SDK's native connection (the Rust core's gRPC, as the worker's) rather than grpc-js: the
 * HTTP/2 work of a call runs on the core's threads, so a workflow start costs the event loop about half as much
 * (0.4-0.5 ms instead of 0.9-1.5 ms back to back, 1.0-1.5 instead of 2.3-2.5 ms when calls are 50 ms apart, on
 * this 2-core machine), and the process as a whole less. The SDK documents this use of NativeConnection.
 */
export async function connectTemporal(config: { temporalAddress: string; temporalNamespace: string; logLevel: string }): Promise<{ client: Client; close(): Promise<void> }> {
  installRuntime(config.logLevel);
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  return { client: new Client({ connection, namespace: config.temporalNamespace }), close: () => connection.close() };
}

/**
 * The core's runtime, once per process. Without its signal handlers: each process handles SIGINT and SIGTERM
 * itself (api/shutdown.ts, worker/main.ts). A runtime installed before (the worker's, the test stack's) is kept.
 */
function installRuntime(logLevel: string): void {
  try {
    Runtime.install({ logger: new DefaultLogger(sdkLogLevel(logLevel)), shutdownSignals: [] });
  } catch (err) {
    if (!(err instanceof IllegalStateError)) throw err;
  }
}

/** The SDK's own log lines follow LOG_LEVEL too (its levels are a subset of pino's). */
export function sdkLogLevel(level: string): LogLevel {
  const map: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', fatal: 'ERROR', silent: 'ERROR' };
  return map[level] ?? 'INFO';
}
