// The one place environment variables are read (with each rail's own settings, read by its folder's config.ts and
// listed in rails/settings.ts); everything else receives a Config.
// Defaults follow ../shared/spec/decisions.md and the decisions in docs/decisions/.
import { parseStatementInterval } from '../domain/statement-interval';
import { readRailConfigs, type RailConfigs } from '../rails/settings';
import { bool, httpBaseUrl, int, intWithin } from './env-values';

// A quote's life is at most a day: a rate locked longer is no quote, and 0 would expire every quote as it is made.
const QUOTE_TTL_MAX_SECONDS = 86_400;

/** Each rail's settings are `config.<key>` of rails/settings.ts (`config.pix`, read by rails/pix/config.ts). */
export interface Config extends RailConfigs {
  port: number;
  /** Interface the API binds (HOST); tests bind loopback only. */
  host: string;
  databaseUrl: string;
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue: string;
  /** Task queue of webhook delivery workflows and their attempts, apart from money movement. */
  webhookTaskQueue: string;
  /**
   * The queues this worker process serves (WORKER_QUEUES): `main` (taskQueue), `webhooks` (webhookTaskQueue),
   * `rails` (railsTaskQueue).
   */
  workerQueues: WorkerQueue[];
  /**
   * AUTH_URL: the base address of the token endpoint when it is not this API's own (the spec's "unless AUTH_URL points
   * elsewhere"); /openapi.json names it. Unset: the API's own address.
   */
  authUrl?: string;
  /** SANDBOX: the /api/sandbox routes exist (customers stand in for operators and rails). Off unless asked. */
  sandbox: boolean;
  quoteTtlSeconds: number;
  depositWindowSeconds: number;
  replayWindowSeconds: number;
  withdrawalReviewThresholdUsd: string;
  webhookAllowPrivateUrls: boolean;
  webhookTimeoutSeconds: number;
  /** Attempts one subscription may have in flight at once, per worker process. */
  webhookEndpointConcurrency: number;
  /** Attempts one customer's subscriptions may have in flight together, per worker process. */
  webhookCustomerConcurrency: number;
  /** Delays between delivery attempts; its length + 1 is the number of attempts. */
  webhookRetryScheduleSeconds: number[];
  /** Encrypts subscription signing secrets at rest. */
  webhookSecretKey: string;
  /** A subscription whose every attempt failed for this long (and at least 3 attempts) is DISABLED. */
  webhookDisableAfterSeconds: number;
  /** A delivery that has waited this long for a free slot of its endpoint ends FAILED ENDPOINT_BUSY (recoverable). */
  webhookMaxBusyWaitSeconds: number;
  /** Live (not deleted) subscriptions one customer may have; past it a create is 422 SUBSCRIPTION_LIMIT_REACHED. */
  webhookSubscriptionsMax: number;
  /** Instructions one customer may have PENDING_REVIEW; past it a new one is 422 PAYMENT_INSTRUCTION_LIMIT_REACHED. */
  paymentInstructionsPendingMax: number;
  /** Bytes of onboarding documents one customer may store, in MiB (decision 0350). */
  documentStoragePerCustomerMb: number;
  /** Events are kept this many days for the events API, then purged by the worker. */
  eventRetentionDays: number;
  /**
   * The periods issued statements close: `month` (default), `day` or an ISO 8601 duration (domain/statement-interval).
   */
  statementInterval: string;
  logLevel: string;
  jwtIssuer: string;
  jwtAudience: string;
  cursorSecret: string;
  /** `deployment`: the per-customer rate is shared by every API process (Postgres); `process`: one per process. */
  rateLimitScope: 'deployment' | 'process';
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  rateLimitInFlight: number;
  rateLimitQueue: number;
  /** Statements one API process writes at once, every customer together, and one customer's share (decision 0251). */
  statementStreamsMax: number;
  statementStreamsPerCustomer: number;
  /** Rows of list pages one API process presents at once (a page counts its `limit`), one customer's share (0361). */
  listRowsMax: number;
  listRowsPerCustomer: number;
  /** KiB of large request bodies one API process reads at once, every customer together, and one customer's share. */
  bodyKibMax: number;
  bodyKibPerCustomer: number;
  /** Operations of one customer accepted but not yet started past which its new ones get 429 (fair share). */
  maxPendingOperationsPerCustomer: number;
  /** A customer's operations started in Temporal and not yet run, at most; 0: no window (decision 0099). */
  maxStartedOperationsPerCustomer: number;
  tokenClientFailuresPerMinute: number;
  tokenAddressFailuresPerMinute: number;
  tokenAddressPerSecond: number;
  httpHeadersTimeoutMs: number;
  httpRequestTimeoutMs: number;
  httpKeepAliveTimeoutMs: number;
  workerMetricsAddress: string | undefined;
  /**
   * A workflow bundle made from this same code (`node dist/worker/bundle.js <file>`; the Docker image builds one),
   * read at start instead of bundled there. Unset: the worker bundles the workflows at every start.
   */
  workflowBundlePath: string | undefined;
  customerCacheSeconds: number;
  /** How long a client's previous secret keeps working after `cambio customer rotate-secret`. */
  clientSecretGraceSeconds: number;
  /** Bytes of list pages an API process keeps to answer unchanged lists from (0: none). */
  listCacheBytes: number;
  shutdownGraceSeconds: number;
  shutdownDelaySeconds: number;
  /**
   * How long a workflow's next task waits on the sticky queue of the worker that has it cached before Temporal hands
   * it to any worker of the task queue: what a worker's crash costs each of its workflows (decision 0324).
   */
  workerStickyTimeoutSeconds: number;
  /** Take the client address from X-Forwarded-For (last entry): only behind a proxy that sets it. */
  trustProxy: boolean;
  /** Bearer token that GET /metrics requires; unset: /metrics answers loopback clients only. */
  metricsToken: string | undefined;
  /**
   * A withdrawal PROCESSING (or a return RETURNING) unchanged for longer than this is stuck: counted by
   * `cambio_payouts_stuck` and `cambio_returns_stuck` on /metrics, and listed by `cambio operation list --stuck`
   * unless `--older-than` says otherwise.
   */
  stuckPayoutAfterSeconds: number;
  /** Postgres session settings of every application connection (db/session-settings.ts). */
  dbIdleInTransactionTimeoutMs: number;
  dbLockTimeoutMs: number;
  dbStatementTimeoutMs: number;
  dbConnectTimeoutMs: number;
  dbPoolAcquireTimeoutMs: number;
  /** How long /readyz trusts its last probe of Postgres and Temporal. */
  readinessCacheMs: number;
  /** Task queue of provider calls (rails/): a slow PSP holds only these slots, never those that settle money. */
  railsTaskQueue: string;
  /** Where the PSP reaches Cambio (notices go to `{publicBaseUrl}/rails/pix/{token}/pix`). */
  publicBaseUrl: string;
  rates: RatesConfig;
}

export type WorkerQueue = 'main' | 'webhooks' | 'rails';
const WORKER_QUEUES: WorkerQueue[] = ['main', 'webhooks', 'rails'];

/** A comma list of `main`, `webhooks` and `rails`, at least one. */
const queues = (v: string | undefined): WorkerQueue[] => {
  if (v === undefined || v.trim() === '') return [...WORKER_QUEUES];
  const names = v.split(',').map((part) => part.trim());
  const unknown = names.filter((n) => !WORKER_QUEUES.includes(n as WorkerQueue));
  if (unknown.length) throw new Error(`WORKER_QUEUES must be a comma list of ${WORKER_QUEUES.join(', ')}, got "${v}"`);
  return WORKER_QUEUES.filter((q) => names.includes(q));
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

const scope = (v: string | undefined): 'deployment' | 'process' => {
  if (v === undefined || v === '' || v === 'deployment') return 'deployment';
  if (v === 'process') return 'process';
  throw new Error(`RATE_LIMIT_SCOPE must be deployment or process, got "${v}"`);
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env.PORT, 3000, 'PORT');
  return {
    port,
    host: env.HOST || '0.0.0.0',
    databaseUrl: env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/cambio',
    temporalAddress: env.TEMPORAL_ADDRESS || '127.0.0.1:7233',
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE || 'cambio',
    // Deliveries have their own queue, workers and slots: a receiver that hangs can only hold delivery slots.
    webhookTaskQueue: env.TEMPORAL_WEBHOOK_TASK_QUEUE || 'cambio-webhooks',
    workerQueues: queues(env.WORKER_QUEUES),
    authUrl: httpBaseUrl(env.AUTH_URL, 'AUTH_URL'),
    // The customer approves its own reviews and reports its own deposits paid: never a silent default.
    sandbox: bool(env.SANDBOX, false),
    quoteTtlSeconds: intWithin(env.QUOTE_TTL_SECONDS, 30, 'QUOTE_TTL_SECONDS', 1, QUOTE_TTL_MAX_SECONDS),
    depositWindowSeconds: int(env.DEPOSIT_WINDOW_SECONDS, 86400, 'DEPOSIT_WINDOW_SECONDS'),
    replayWindowSeconds: int(env.REPLAY_WINDOW_SECONDS, 604800, 'REPLAY_WINDOW_SECONDS'),
    // Checked here: `NaN` or `Infinity` would let every withdrawal past review; `10,000` would fail every one.
    withdrawalReviewThresholdUsd: decimal(
      env.WITHDRAWAL_REVIEW_THRESHOLD_USD,
      '10000',
      'WITHDRAWAL_REVIEW_THRESHOLD_USD',
    ),
    webhookAllowPrivateUrls: bool(env.WEBHOOK_ALLOW_PRIVATE_URLS, false),
    webhookTimeoutSeconds: int(env.WEBHOOK_TIMEOUT_SECONDS, 10, 'WEBHOOK_TIMEOUT_SECONDS'),
    // So one endpoint cannot take every delivery slot of a worker (decision 0058).
    webhookEndpointConcurrency: Math.max(1, int(env.WEBHOOK_ENDPOINT_CONCURRENCY, 4, 'WEBHOOK_ENDPOINT_CONCURRENCY')),
    // A quarter of the delivery worker's 64 activity slots (worker/queues.ts): a customer whose receivers all hang
    // holds at most that, so at least three other customers' deliveries run at full speed beside it.
    webhookCustomerConcurrency: Math.max(1, int(env.WEBHOOK_CUSTOMER_CONCURRENCY, 16, 'WEBHOOK_CUSTOMER_CONCURRENCY')),
    // Svix's schedule: 8 attempts over about 27.6 h, so a receiver gets a full day to recover.
    webhookRetryScheduleSeconds: seconds(
      env.WEBHOOK_RETRY_SCHEDULE_SECONDS,
      [5, 300, 1800, 7200, 18000, 36000, 36000],
      'WEBHOOK_RETRY_SCHEDULE_SECONDS',
    ),
    // Stable per deployment: changing it makes stored secrets unreadable. Set it in production.
    webhookSecretKey: env.WEBHOOK_SECRET_KEY || 'cambio-dev-webhook-secret-key',
    // Svix disables an endpoint after 5 days of failure: long enough to ride out a weekend outage.
    webhookDisableAfterSeconds: int(env.WEBHOOK_DISABLE_AFTER_SECONDS, 432000, 'WEBHOOK_DISABLE_AFTER_SECONDS'),
    // An hour behind a hanging endpoint's backlog (at most 4 attempts of 10 s at a time): the customer is better
    // served by recover once the endpoint is back than by a delivery that waits for days.
    webhookMaxBusyWaitSeconds: int(env.WEBHOOK_MAX_BUSY_WAIT_SECONDS, 3600, 'WEBHOOK_MAX_BUSY_WAIT_SECONDS'),
    // Every event fans out to each of its customer's subscriptions, in the worker's CPU: 1,000 of one customer's took
    // another customer's deliveries from ~100 ms to 2-3 s on a 2-core host. 100 keeps it a tenth of that and leaves
    // room for an integration's fixtures; a deployment may lower it (decision 0258).
    webhookSubscriptionsMax: intWithin(env.WEBHOOK_SUBSCRIPTIONS_MAX, 100, 'WEBHOOK_SUBSCRIPTIONS_MAX', 1, 1000),
    // Each instruction waits for a person's review in an open workflow of its own, with no deadline: 500 leaves room
    // for a customer importing its payees and stops a leaked key from opening them without end (decision 0316).
    paymentInstructionsPendingMax: intWithin(
      env.PAYMENT_INSTRUCTIONS_PENDING_MAX,
      500,
      'PAYMENT_INSTRUCTIONS_PENDING_MAX',
      1,
      10_000,
    ),
    // Documents are kept (a superseded or rejected one is evidence too) and there is no delete: 1 GiB is about two
    // hundred documents at the 5 MiB maximum, a thousand at a usual size, and stops one customer (or a leaked key)
    // from filling the database every customer shares (decision 0350).
    documentStoragePerCustomerMb: intWithin(
      env.DOCUMENT_STORAGE_PER_CUSTOMER_MB,
      1024,
      'DOCUMENT_STORAGE_PER_CUSTOMER_MB',
      5,
      1_048_576,
    ),
    eventRetentionDays: int(env.EVENT_RETENTION_DAYS, 30, 'EVENT_RETENTION_DAYS'),
    statementInterval: parseStatementInterval(env.STATEMENT_INTERVAL || 'month') && (env.STATEMENT_INTERVAL || 'month'),
    logLevel: env.LOG_LEVEL || 'info',
    jwtIssuer: env.JWT_ISSUER || 'cambio',
    jwtAudience: env.JWT_AUDIENCE || 'cambio-api',
    // Cursors are HMAC-signed so a client cannot forge a position; the key only needs to be stable per deployment.
    cursorSecret: env.CURSOR_SECRET || 'cambio-dev-cursor-secret',
    // For the whole deployment (RATE_LIMIT_SCOPE=deployment, the default): bench:api measured one API process at
    // ~1,800 quotes/s on 2 cores, so 250/s keeps one customer near a seventh of one process and far below a
    // 2-process deployment, and still leaves an integrator's load test room to run (decision 0056).
    rateLimitScope: scope(env.RATE_LIMIT_SCOPE),
    rateLimitPerSecond: int(env.RATE_LIMIT_PER_SECOND, 250, 'RATE_LIMIT_PER_SECOND'),
    rateLimitBurst: int(env.RATE_LIMIT_BURST, 500, 'RATE_LIMIT_BURST'),
    rateLimitInFlight: int(env.RATE_LIMIT_IN_FLIGHT, 8, 'RATE_LIMIT_IN_FLIGHT'),
    rateLimitQueue: int(env.RATE_LIMIT_QUEUE, 64, 'RATE_LIMIT_QUEUE'),
    // A paused statement holds a page or two of entries in the API's heap (128 MB): forty of them ran it out of memory.
    statementStreamsMax: intWithin(env.STATEMENT_STREAMS_MAX, 16, 'STATEMENT_STREAMS_MAX', 1, 10_000),
    statementStreamsPerCustomer: intWithin(
      env.STATEMENT_STREAMS_PER_CUSTOMER,
      4,
      'STATEMENT_STREAMS_PER_CUSTOMER',
      1,
      10_000,
    ),
    // A page of 100 accounts costs the API's one thread about 5 ms: eight of one customer's at once made another
    // customer's cheap read wait behind all of them at each of its steps, 40 times its pace (decision 0361).
    listRowsMax: intWithin(env.LIST_ROWS_MAX, 200, 'LIST_ROWS_MAX', 100, 100_000),
    listRowsPerCustomer: intWithin(env.LIST_ROWS_PER_CUSTOMER, 100, 'LIST_ROWS_PER_CUSTOMER', 100, 100_000),
    // A body of a megabyte costs the API's one thread about 9 ms to read, decode and parse: eight of one customer's at
    // once made another customer's request take 30 to 140 times its pace (decision 0362). Two bodies at the limit at
    // once, at most one of them a customer's; never less than one.
    bodyKibMax: intWithin(env.BODY_KIB_MAX, 2048, 'BODY_KIB_MAX', 1024, 1_048_576),
    bodyKibPerCustomer: intWithin(env.BODY_KIB_PER_CUSTOMER, 1024, 'BODY_KIB_PER_CUSTOMER', 1024, 1_048_576),
    // A customer's backlog of accepted operations the engine has not started: past it the customer is answered
    // 429 with an honest Retry-After instead of a 201 that takes minutes (decisions 0072, 0092).
    maxPendingOperationsPerCustomer: Math.max(
      1,
      int(env.MAX_PENDING_OPERATIONS_PER_CUSTOMER, 500, 'MAX_PENDING_OPERATIONS_PER_CUSTOMER'),
    ),
    // Of that backlog, how much the relay hands Temporal at once: the rest waits in the outbox, so one customer's
    // flood is never a backlog of hundreds of tasks in matching that every other customer's task is read past.
    maxStartedOperationsPerCustomer: int(
      env.MAX_STARTED_OPERATIONS_PER_CUSTOMER,
      50,
      'MAX_STARTED_OPERATIONS_PER_CUSTOMER',
    ),
    tokenClientFailuresPerMinute: int(env.TOKEN_CLIENT_FAILURES_PER_MINUTE, 10, 'TOKEN_CLIENT_FAILURES_PER_MINUTE'),
    tokenAddressFailuresPerMinute: int(env.TOKEN_ADDRESS_FAILURES_PER_MINUTE, 30, 'TOKEN_ADDRESS_FAILURES_PER_MINUTE'),
    tokenAddressPerSecond: int(env.TOKEN_ADDRESS_PER_SECOND, 10, 'TOKEN_ADDRESS_PER_SECOND'),
    httpHeadersTimeoutMs: int(env.HTTP_HEADERS_TIMEOUT_MS, 10_000, 'HTTP_HEADERS_TIMEOUT_MS'),
    httpRequestTimeoutMs: int(env.HTTP_REQUEST_TIMEOUT_MS, 30_000, 'HTTP_REQUEST_TIMEOUT_MS'),
    httpKeepAliveTimeoutMs: int(env.HTTP_KEEP_ALIVE_TIMEOUT_MS, 5_000, 'HTTP_KEEP_ALIVE_TIMEOUT_MS'),
    // Off unless set: two workers on one host would fight over a fixed port.
    workerMetricsAddress: env.WORKER_METRICS_ADDRESS || undefined,
    workflowBundlePath: env.WORKFLOW_BUNDLE_PATH || undefined,
    // How long an API process trusts its last look at a customer's status: the lag of `cambio customer disable`.
    customerCacheSeconds: int(env.CUSTOMER_CACHE_SECONDS, 5, 'CUSTOMER_CACHE_SECONDS'),
    clientSecretGraceSeconds: int(env.CLIENT_SECRET_GRACE_SECONDS, 86400, 'CLIENT_SECRET_GRACE_SECONDS'),
    // A copy answers only while its list's version is unchanged, so this bounds memory, not staleness.
    listCacheBytes: int(env.LIST_CACHE_MB, 16, 'LIST_CACHE_MB') * 1024 * 1024,
    // SIGTERM: the API finishes in-flight requests and the worker its in-flight activities within this, then
    // force. Below the 30 s most platforms wait before SIGKILL (Kubernetes, compose's stop_grace_period here).
    shutdownGraceSeconds: int(env.SHUTDOWN_GRACE_SECONDS, 25, 'SHUTDOWN_GRACE_SECONDS'),
    // SIGTERM: how long the API keeps accepting with /readyz at 503 before it closes its port, so a load balancer
    // that polls readiness stops routing to it first. 0 for a single process (npm start).
    shutdownDelaySeconds: int(env.SHUTDOWN_DELAY_SECONDS, 0, 'SHUTDOWN_DELAY_SECONDS'),
    // The SDK's default. Lower, a crashed worker's workflows move on sooner, but a busy live worker's cached
    // workflows are more often replayed elsewhere (their task outwaited the sticky poller) (decision 0324).
    workerStickyTimeoutSeconds: intWithin(
      env.WORKER_STICKY_TIMEOUT_SECONDS,
      10,
      'WORKER_STICKY_TIMEOUT_SECONDS',
      1,
      600,
    ),
    // Off: without a proxy in front, X-Forwarded-For is whatever the client wrote (decision 0053).
    trustProxy: bool(env.TRUST_PROXY, false),
    metricsToken: env.METRICS_TOKEN || undefined,
    // The CLI's default before it read this: a PIX payout settles in seconds, five minutes is well past (0120).
    stuckPayoutAfterSeconds: int(env.STUCK_PAYOUT_AFTER_SECONDS, 300, 'STUCK_PAYOUT_AFTER_SECONDS'),
    // What a frozen or partitioned process can hold: Postgres ends its session once it sat idle inside a
    // transaction this long, which releases its row and advisory locks (decision 0052).
    dbIdleInTransactionTimeoutMs: int(
      env.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      5_000,
      'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS',
    ),
    // A statement waiting on a lock gives up after this (503, retried by the client) instead of queueing forever.
    dbLockTimeoutMs: int(env.DB_LOCK_TIMEOUT_MS, 5_000, 'DB_LOCK_TIMEOUT_MS'),
    // Nothing on a request path runs this long; a report over a long period is the slowest and stays far below.
    dbStatementTimeoutMs: int(env.DB_STATEMENT_TIMEOUT_MS, 30_000, 'DB_STATEMENT_TIMEOUT_MS'),
    dbConnectTimeoutMs: int(env.DB_CONNECT_TIMEOUT_MS, 3_000, 'DB_CONNECT_TIMEOUT_MS'),
    // A request that cannot get a pooled connection this soon is answered 503 rather than left waiting 60 s.
    dbPoolAcquireTimeoutMs: int(env.DB_POOL_ACQUIRE_TIMEOUT_MS, 10_000, 'DB_POOL_ACQUIRE_TIMEOUT_MS'),
    readinessCacheMs: int(env.READINESS_CACHE_MS, 1_000, 'READINESS_CACHE_MS'),
    railsTaskQueue: env.TEMPORAL_RAILS_TASK_QUEUE || 'cambio-rails',
    publicBaseUrl: (env.PUBLIC_BASE_URL || `http://127.0.0.1:${port}`).replace(/\/+$/, ''),
    ...readRailConfigs(env),
    rates: loadRatesConfig(env),
  };
}

// ---- Live exchange rates (../shared/spec/decisions.md "Live exchange rates"; rates/README.md) ----------------------
// Kept together here, apart from the rest of loadConfig, so that other changes to this file do not touch it.

export type RateSourceName = 'table' | 'oxr' | 'ptax' | 'ecb';
const RATE_SOURCE_NAMES: RateSourceName[] = ['table', 'oxr', 'ptax', 'ecb'];

export interface RatesConfig {
  /** RATES_SOURCES: the first prices quotes (the primary), the others are references; empty when unset. */
  sources: RateSourceName[];
  /** RATES_POLL_SECONDS: how often the Temporal Schedule polls every source. */
  pollSeconds: number;
  /** RATES_MAX_AGE_SECONDS: a primary rate received longer ago than this prices no new quote. */
  maxAgeSeconds: number;
  /** RATES_MAX_DEVIATION_PCT: a decimal string; the primary may differ this much from a reference's fixing. */
  maxDeviationPct: string;
  /** RATES_TIMEOUT_MS: the bound of one request to a source (a poll never waits longer on one). */
  timeoutMs: number;
  oxr: { url: string; appId: string | undefined };
  ptax: { url: string };
  ecb: { url: string };
}

const rateSources = (v: string | undefined): RateSourceName[] => {
  if (v === undefined || v.trim() === '') return [];
  const names = v.split(',').map((part) => part.trim().toLowerCase());
  const unknown = names.filter((n) => !RATE_SOURCE_NAMES.includes(n as RateSourceName));
  if (unknown.length || new Set(names).size !== names.length) {
    throw new Error(`RATES_SOURCES must be a comma list of distinct ${RATE_SOURCE_NAMES.join(', ')}, got "${v}"`);
  }
  return names as RateSourceName[];
};

/** A non-negative decimal in plain digits (`10000`, `2.5`): decimal.js reads it exactly, and nothing it reads oddly. */
const decimal = (v: string | undefined, fallback: string, name: string): string => {
  if (v === undefined || v === '') return fallback;
  if (!/^\d+(\.\d+)?$/.test(v)) throw new Error(`${name} must be a non-negative decimal, got "${v}"`);
  return v;
};

const trimmedUrl = (v: string | undefined, fallback: string) => (v || fallback).replace(/\/+$/, '');

function loadRatesConfig(env: NodeJS.ProcessEnv): RatesConfig {
  const rates: RatesConfig = {
    sources: rateSources(env.RATES_SOURCES),
    pollSeconds: Math.max(1, int(env.RATES_POLL_SECONDS, 30, 'RATES_POLL_SECONDS')),
    maxAgeSeconds: int(env.RATES_MAX_AGE_SECONDS, 120, 'RATES_MAX_AGE_SECONDS'),
    maxDeviationPct: decimal(env.RATES_MAX_DEVIATION_PCT, '3', 'RATES_MAX_DEVIATION_PCT'),
    // Well inside the poll interval and the poll activity's own timeout: a source that hangs costs one poll.
    timeoutMs: int(env.RATES_TIMEOUT_MS, 5_000, 'RATES_TIMEOUT_MS'),
    oxr: { url: trimmedUrl(env.OXR_URL, 'https://openexchangerates.org'), appId: env.OXR_APP_ID || undefined },
    ptax: { url: trimmedUrl(env.PTAX_URL, 'https://olinda.bcb.gov.br') },
    ecb: { url: env.ECB_URL || 'https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml' },
  };
  checkRatesMaxAge(rates);
  return rates;
}

// A poll receives a source's rows once an interval, the last of them up to RATES_TIMEOUT_MS into it: a limit no longer
// than that refuses every cross-currency quote for part of every interval, though every poll is on time (0300).
function checkRatesMaxAge({ sources, pollSeconds, maxAgeSeconds, timeoutMs }: RatesConfig): void {
  if (!sources.some((s) => s !== 'table')) return;
  if (maxAgeSeconds * 1000 > pollSeconds * 1000 + timeoutMs) return;
  throw new Error(
    `RATES_MAX_AGE_SECONDS (${maxAgeSeconds}) must be more than RATES_POLL_SECONDS (${pollSeconds}) plus ` +
      `RATES_TIMEOUT_MS (${timeoutMs}): a rate received on one poll would be too old before the next one`,
  );
}
// ---- end of live exchange rates ----------------------------------------------------------------------------------
