// The one place environment variables are read; everything else receives a Config.
// Defaults follow docs/decisions.md and ../shared/spec/decisions.md.
export interface Config {
  port: number;
  databaseUrl: string;
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue: string;
  authUrl: string;
  sandbox: boolean;
  quoteTtlSeconds: number;
  depositWindowSeconds: number;
  replayWindowSeconds: number;
  withdrawalReviewThresholdUsd: string;
  webhookAllowPrivateUrls: boolean;
  webhookTimeoutSeconds: number;
  /** Delays between delivery attempts; its length + 1 is the number of attempts. */
  webhookRetryScheduleSeconds: number[];
  /** Encrypts subscription signing secrets at rest. */
  webhookSecretKey: string;
  logLevel: string;
  jwtIssuer: string;
  jwtAudience: string;
  cursorSecret: string;
  rateLimitPerSecond: number;
  rateLimitBurst: number;
}

const bool = (v: string | undefined, fallback: boolean) =>
  v === undefined || v === '' ? fallback : ['1', 'true', 'yes', 'on'].includes(v.toLowerCase());

const int = (v: string | undefined, fallback: number, name: string) => {
  if (v === undefined || v === '') return fallback;
  if (!/^\d+$/.test(v)) throw new Error(`${name} must be a whole number, got "${v}"`);
  return Number.parseInt(v, 10);
};

/** A comma list of whole seconds, e.g. `5,300,1800`; empty means no retries. */
const seconds = (v: string | undefined, fallback: number[], name: string): number[] => {
  if (v === undefined) return fallback;
  if (v.trim() === '') return [];
  return v.split(',').map((part) => {
    if (part.trim() === '') throw new Error(`${name} must be a comma list of whole seconds, got "${v}"`);
    return int(part.trim(), 0, name);
  });
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env.PORT, 3000, 'PORT');
  return {
    port,
    databaseUrl: env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/cambio',
    temporalAddress: env.TEMPORAL_ADDRESS || '127.0.0.1:7233',
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE || 'cambio',
    authUrl: env.AUTH_URL || `http://127.0.0.1:${port}`,
    sandbox: bool(env.SANDBOX, env.NODE_ENV !== 'production'),
    quoteTtlSeconds: int(env.QUOTE_TTL_SECONDS, 30, 'QUOTE_TTL_SECONDS'),
    depositWindowSeconds: int(env.DEPOSIT_WINDOW_SECONDS, 86400, 'DEPOSIT_WINDOW_SECONDS'),
    replayWindowSeconds: int(env.REPLAY_WINDOW_SECONDS, 604800, 'REPLAY_WINDOW_SECONDS'),
    withdrawalReviewThresholdUsd: env.WITHDRAWAL_REVIEW_THRESHOLD_USD || '10000',
    webhookAllowPrivateUrls: bool(env.WEBHOOK_ALLOW_PRIVATE_URLS, false),
    webhookTimeoutSeconds: int(env.WEBHOOK_TIMEOUT_SECONDS, 10, 'WEBHOOK_TIMEOUT_SECONDS'),
    // Svix's schedule: 8 attempts over about 27.6 h, so a receiver gets a full day to recover.
    webhookRetryScheduleSeconds: seconds(env.WEBHOOK_RETRY_SCHEDULE_SECONDS, [5, 300, 1800, 7200, 18000, 36000, 36000], 'WEBHOOK_RETRY_SCHEDULE_SECONDS'),
    // Stable per deployment: changing it makes stored secrets unreadable. Set it in production.
    webhookSecretKey: env.WEBHOOK_SECRET_KEY || 'cambio-dev-webhook-secret-key',
    logLevel: env.LOG_LEVEL || 'info',
    jwtIssuer: env.JWT_ISSUER || 'cambio',
    jwtAudience: env.JWT_AUDIENCE || 'cambio-api',
    // Cursors are HMAC-signed so a client cannot forge a position; the key only needs to be stable per deployment.
    cursorSecret: env.CURSOR_SECRET || 'cambio-dev-cursor-secret',
    rateLimitPerSecond: int(env.RATE_LIMIT_PER_SECOND, 500, 'RATE_LIMIT_PER_SECOND'),
    rateLimitBurst: int(env.RATE_LIMIT_BURST, 1000, 'RATE_LIMIT_BURST'),
  };
}
