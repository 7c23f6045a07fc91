import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { environmentSchema } from './config.schema';
import { redisClusterNodes, type RedisClusterSettings, type RedisCredentials } from './redis-options';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export class ConfigurationError extends Error {}

/** The validated configuration, read once at boot and injected wherever it is needed. */
/** How long the HTTP server waits on a client, in milliseconds (see docs/operations.md, "HTTP server"). */
export interface HttpTimeouts {
  /** An idle keep-alive connection is closed after this long. */
  readonly keepAliveMs: number;
  /** A request's headers must have arrived this long after its first byte. */
  readonly headersMs: number;
  /** A request, body included, must have arrived this long after its first byte. */
  readonly requestMs: number;
}

/**
 * How long a process waits on Postgres and Redis before it takes them for down, in milliseconds (see
 * docs/operations.md, "Dependency outages"): a server that stops answering without closing its connections fails requests within these.
 */
export interface DependencyTimeouts {
  /**
   * A Redis command on a request's path (rate limits, the login throttle, enqueueing, readiness) fails after this
   * long; the worker's consumers wait out an outage instead.
   */
  readonly redisCommandMs: number;
  /** A Redis connection attempt is abandoned (and tried again) after this long. */
  readonly redisConnectMs: number;
  /** Getting a Postgres connection, from the pool or a new one, fails after this long. */
  readonly databaseConnectMs: number;
  /** An API statement Postgres has not answered after this long fails and its connection is closed. */
  readonly databaseStatementMs: number;
}

/** The platform's model provider, an OpenAI-compatible API (see libs/model-provider). */
export interface ModelProviderSettings {
  /** The API's base URL, `/v1` included for OpenAI (`https://api.openai.com/v1`). */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer`; none for a server that asks for no key (Ollama, vLLM). A secret. */
  readonly apiKey?: string;
  /** The chat model used unless a request names another. */
  readonly model: string;
  /** Longest one attempt of one request may take. */
  readonly timeoutSeconds: number;
  /** Retries of one request on 408, 409, 429, 5xx and network errors, after the provider's `Retry-After`. */
  readonly maxRetries: number;
  /** Requests one process has at the provider at once. */
  readonly concurrency: number;
  /** The embeddings model; none turns search by meaning off. */
  readonly embeddingsModel?: string;
  /** Asked of the embeddings model (models that can shorten their vectors); none: the model's own. */
  readonly embeddingsDimensions?: number;
}

export class AppConfig {
  readonly environment: 'development' | 'production' | 'test';
  readonly port: number;
  readonly workerPort: number;
  /** The API's metrics listener, apart from the public port (a worker serves its metrics on its own port). */
  readonly metricsPort: number;
  readonly databaseUrl: string;
  /** Streaming replicas that serve the API's account reads (see docs/operations.md, "Read replicas"); none by default. */
  readonly databaseReplicaUrls: string[];
  /** A replica whose data is older than this is skipped until it catches up. */
  readonly databaseReplicaMaxLagSeconds: number;
  readonly redisUrl: string;
  /** Set when REDIS_CLUSTER_NODES names a Redis Cluster: every Redis client is then a cluster client, REDIS_URL unused. */
  readonly redisCluster?: RedisClusterSettings;
  readonly redisCredentials: RedisCredentials;
  /**
   * Where queues and jobs live: `redis`, or `postgres` (BullMQ's PostgreSQL backend in DATABASE_URL's database),
   * when nothing may need Redis; rate limits and the login throttle then count in Postgres too.
   */
  readonly queueBackend: 'redis' | 'postgres';
  /** Base for absolute links; when absent, links are built from the request's own host. */
  readonly appUrl?: string;
  readonly encryptionKey: Buffer;
  readonly runtimeApiToken?: string;
  readonly workerConcurrency: number;
  /**
   * Files of 4 MiB or more one worker process reads at once (their extraction and storing); the others wait their
   * turn in the process, their jobs still active. Each such file's thread peaks at about 140 MiB.
   */
  readonly workerLargeFilesAtOnce: number;
  readonly queuePrefix: string;
  readonly rateLimitPerMinute: number;
  readonly loginAttemptsPerMinute: number;
  readonly sessionTtlSeconds: number;
  readonly sessionPurgeIntervalSeconds: number;
  readonly registrationEnabled: boolean;
  readonly outboundAllowLoopback: boolean;
  readonly sipProvisioner: 'local' | 'livekit';
  readonly livekit?: { url: string; apiKey: string; apiSecret: string; requestTimeoutSeconds: number };
  /** A call with no final status after this long is ended as `failed` by the reaper. */
  readonly callStaleAfterMinutes: number;
  /** Calls an account may have in progress at once, unless an operator set its own limit. */
  readonly accountMaxConcurrentCalls: number;
  /** Live streams (owners' views and runtimes' control streams) one API process holds open at once. */
  readonly liveStreamsPerProcess: number;
  /** How long a warm transfer waits for its consultation agent to brief the person before joining them anyway. */
  readonly transferBriefingTimeoutSeconds: number;
  /** Where outbound calls are placed: `local` records them (and, in demo mode, plays them out); `livekit` dials. */
  readonly callDialer: 'local' | 'livekit';
  /** The agent LiveKit dispatches into each call's room, outbound and inbound. */
  readonly livekitAgentName: string;
  /** How long a web call's participant token may be used to join its room (seconds). */
  readonly webCallTokenTtlSeconds: number;
  /** How often the worker compares what the telephony provider holds for this deployment with the database. */
  readonly sipReconcileIntervalSeconds: number;
  /** A provider object younger than this is left to the request making it; older unknown ones are orphans. */
  readonly sipReconcileGraceSeconds: number;
  /** How often the worker looks for campaigns with leads due (a call's end also triggers a look at once). */
  readonly dialerIntervalSeconds: number;
  /** A dial still unsettled after this long (its worker died) is taken over; the dial itself is idempotent. */
  readonly dialLeaseSeconds: number;
  /** Demo mode of the local dialer: each call is played out through the ingestion service after this long; 0 = off. */
  readonly localDialerDemoMs: number;
  /** How long the local dialer takes to place a call, as a provider would. */
  readonly localDialerLatencyMs: number;
  /** How long a SIP trunk create or update waits for the provider before answering 502. */
  readonly sipProvisionTimeoutSeconds: number;
  /** The fixed-egress SIP proxy that trunks with `outbound_proxy` send their calls through, if any. */
  readonly sipOutboundProxyAddress?: string;
  readonly logLevel: LogLevel;
  /** `json` (one JSON object a line) or `pretty` (readable, for development). */
  readonly logFormat: 'json' | 'pretty';
  readonly shutdownGraceSeconds: number;
  /**
   * The most bytes of file uploads one API process holds at once (each is buffered whole on its way to Postgres);
   * past it an upload is answered 503 with Retry-After before its body is read.
   */
  readonly uploadBudgetBytes: number;
  /** After SIGTERM, how long readiness answers 503 while requests are still served, so balancers drain first. */
  readonly shutdownDrainSeconds: number;
  /** The operator credential of the queue dashboard; the dashboard is off without it. */
  readonly queueDashboard?: { username: string; password: string };
  /** A read-only login to the queue dashboard (looks, never retries or removes). */
  readonly queueDashboardViewer?: { username: string; password: string };
  /** Where the queue dashboard is served: the API's public port, or the metrics listener (METRICS_PORT) only. */
  readonly queueDashboardOn: 'public' | 'metrics';
  /** Browser origins allowed by CORS; none (CORS off) when empty. */
  readonly corsOrigins: string[];
  /** How long the HTTP server waits on a client. */
  readonly httpTimeouts: HttpTimeouts;
  /** How long a process waits on Postgres and Redis. */
  readonly dependencyTimeouts: DependencyTimeouts;
  /** Express's `trust proxy`: which hops' X-Forwarded-For names the client (rate limits, login throttle, links). */
  readonly trustProxy: boolean | number | string;
  /** How long a worker holds a job before another may take it over (it renews the lock while alive). */
  readonly jobLockMs: number;
  /** How often workers look for jobs whose holder died. */
  readonly jobStalledCheckMs: number;
  /** First retry delay of a failed job; doubles on each attempt. */
  readonly jobRetryDelayMs: number;
  /** A document still processing after this long is re-enqueued by the sweeper. */
  readonly documentStuckAfterSeconds: number;
  readonly documentSweepIntervalSeconds: number;
  /** A lead import with no batch written for this long, and no live job, is taken up again by the sweep. */
  readonly importStuckAfterSeconds: number;
  /** An ended call whose webhook delivery has not run or finished this long, and whose job is gone, is queued again. */
  readonly webhookStuckAfterSeconds: number;
  /** Calls older than this many days are removed by the worker; unset keeps them forever. */
  readonly callRetentionDays?: number;
  readonly extractionTimeoutSeconds: number;
  /** Pause between two requests of a crawl to the same host. */
  readonly crawlDelayMs: number;
  /** The model provider; unset (no LLM_BASE_URL): no post-call analysis and no search by meaning. */
  readonly modelProvider?: ModelProviderSettings;
  /**
   * The most of a transcript a post-call analysis sends the model, in tokens counted as UTF-8 bytes (no token is
   * shorter than a byte, so a transcript within it fits whatever its language); longer ones are cut in the middle.
   */
  readonly analysisTranscriptMaxTokens: number;

  constructor(values: AppConfig) {
    Object.assign(this, values);
  }
}

/** Where a development machine keeps its generated encryption key, so secrets survive restarts. */
export const LOCAL_KEY_FILE = resolve(process.cwd(), '.local', 'encryption.key');

function decodeKey(text: string): Buffer {
  return /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
}

function localEncryptionKey(): Buffer {
  if (existsSync(LOCAL_KEY_FILE)) {
    return decodeKey(readFileSync(LOCAL_KEY_FILE, 'utf8').trim());
  }
  const key = randomBytes(32);
  mkdirSync(dirname(LOCAL_KEY_FILE), { recursive: true });
  try {
    writeFileSync(LOCAL_KEY_FILE, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process started at the same moment wrote it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return localEncryptionKey();
    throw error;
  }
  return key;
}

/**
 * The database address alone, for migrations: they need nothing else (no key, no Redis), in production too. The
 * same rules as `loadConfig` for this one variable.
 */
export function loadDatabaseUrl(source: NodeJS.ProcessEnv = process.env): string {
  const value = source.DATABASE_URL || undefined;
  if (value === undefined && source.NODE_ENV === 'production')
    throw new ConfigurationError('Invalid configuration: DATABASE_URL: is required when NODE_ENV=production');
  const parsed = environmentSchema.shape.DATABASE_URL.safeParse(value);
  if (!parsed.success)
    throw new ConfigurationError(`Invalid configuration: DATABASE_URL: ${parsed.error.issues[0].message}`);
  return parsed.data;
}

/**
 * Parses the environment into an AppConfig. Throws a ConfigurationError that names every bad variable,
 * so a misconfigured process stops at boot rather than failing on the first request that needs the value.
 */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): AppConfig {
  const blankAsUnset = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== ''));
  const parsed = environmentSchema.safeParse(blankAsUnset);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  // In production a default address would point at whatever happens to listen there: ask for it instead.
  if (blankAsUnset.NODE_ENV === 'production') {
    // A cluster's seed nodes name the Redis as well as a URL does.
    const redis = (blankAsUnset.QUEUE_BACKEND ?? 'redis') === 'redis' && !blankAsUnset.REDIS_CLUSTER_NODES;
    // Checked here rather than in the schema, whose cross-field rules are skipped once any field is invalid.
    for (const name of ['DATABASE_URL', ...(redis ? ['REDIS_URL'] : []), 'ENCRYPTION_KEY', 'APP_URL']) {
      if (blankAsUnset[name] === undefined)
        problems.push(
          `${name}: is required when NODE_ENV=production` +
            (name === 'REDIS_URL' ? ' and QUEUE_BACKEND=redis (the default), unless REDIS_CLUSTER_NODES is set' : '') +
            // Links in answers would otherwise name whatever host a client sent.
            (name === 'APP_URL' ? ' (the address clients reach the API at, for the links in its answers)' : ''),
        );
    }
  }
  // Every problem at once, so a deploy is fixed in one round rather than one variable a restart; on one line, so a
  // terminal, a container's log and a collector all show it whole.
  if (problems.length > 0 || !parsed.success)
    throw new ConfigurationError(`Invalid configuration: ${problems.join('; ')}`);
  const env = parsed.data;
  return new AppConfig({
    environment: env.NODE_ENV,
    port: env.PORT,
    workerPort: env.WORKER_PORT,
    metricsPort: env.METRICS_PORT,
    databaseUrl: env.DATABASE_URL,
    databaseReplicaUrls: env.DATABASE_REPLICA_URLS,
    databaseReplicaMaxLagSeconds: env.DATABASE_REPLICA_MAX_LAG_SECONDS,
    redisUrl: env.REDIS_URL,
    redisCluster: env.REDIS_CLUSTER_NODES
      ? { nodes: redisClusterNodes(env.REDIS_CLUSTER_NODES), tls: env.REDIS_CLUSTER_TLS }
      : undefined,
    redisCredentials: { username: env.REDIS_USERNAME, password: env.REDIS_PASSWORD },
    queueBackend: env.QUEUE_BACKEND,
    appUrl: env.APP_URL?.replace(/\/+$/, ''),
    encryptionKey: env.ENCRYPTION_KEY ? decodeKey(env.ENCRYPTION_KEY) : localEncryptionKey(),
    runtimeApiToken: env.RUNTIME_API_TOKEN,
    workerConcurrency: env.WORKER_CONCURRENCY,
    workerLargeFilesAtOnce: env.WORKER_LARGE_FILES_AT_ONCE,
    queuePrefix: env.QUEUE_PREFIX,
    rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE,
    loginAttemptsPerMinute: env.LOGIN_ATTEMPTS_PER_MINUTE,
    sessionTtlSeconds: Math.round(env.SESSION_TTL_DAYS * 86_400),
    sessionPurgeIntervalSeconds: env.SESSION_PURGE_INTERVAL_SECONDS,
    registrationEnabled: env.REGISTRATION_ENABLED,
    outboundAllowLoopback: env.OUTBOUND_ALLOW_LOOPBACK,
    sipProvisioner: env.SIP_PROVISIONER,
    livekit:
      env.LIVEKIT_URL && env.LIVEKIT_API_KEY && env.LIVEKIT_API_SECRET
        ? {
            url: env.LIVEKIT_URL,
            apiKey: env.LIVEKIT_API_KEY,
            apiSecret: env.LIVEKIT_API_SECRET,
            requestTimeoutSeconds: env.LIVEKIT_REQUEST_TIMEOUT_SECONDS,
          }
        : undefined,
    sipProvisionTimeoutSeconds: env.SIP_PROVISION_TIMEOUT_SECONDS,
    callStaleAfterMinutes: env.CALL_STALE_AFTER_MINUTES,
    accountMaxConcurrentCalls: env.ACCOUNT_MAX_CONCURRENT_CALLS,
    liveStreamsPerProcess: env.LIVE_STREAMS_PER_PROCESS,
    transferBriefingTimeoutSeconds: env.TRANSFER_BRIEFING_TIMEOUT_SECONDS,
    callDialer: env.CALL_DIALER,
    livekitAgentName: env.LIVEKIT_AGENT_NAME,
    webCallTokenTtlSeconds: env.WEB_CALL_TOKEN_TTL_SECONDS,
    sipReconcileIntervalSeconds: env.SIP_RECONCILE_INTERVAL_SECONDS,
    sipReconcileGraceSeconds: env.SIP_RECONCILE_GRACE_SECONDS,
    dialerIntervalSeconds: env.DIALER_INTERVAL_SECONDS,
    dialLeaseSeconds: env.DIAL_LEASE_SECONDS,
    localDialerDemoMs: env.LOCAL_DIALER_DEMO_MS,
    localDialerLatencyMs: env.LOCAL_DIALER_LATENCY_MS,
    sipOutboundProxyAddress: env.SIP_OUTBOUND_PROXY_ADDRESS,
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT,
    shutdownGraceSeconds: env.SHUTDOWN_GRACE_SECONDS,
    uploadBudgetBytes: env.UPLOAD_BUDGET_MB * 1024 * 1024,
    shutdownDrainSeconds: env.SHUTDOWN_DRAIN_SECONDS,
    queueDashboard:
      env.QUEUE_DASHBOARD_USERNAME && env.QUEUE_DASHBOARD_PASSWORD
        ? { username: env.QUEUE_DASHBOARD_USERNAME, password: env.QUEUE_DASHBOARD_PASSWORD }
        : undefined,
    queueDashboardViewer:
      env.QUEUE_DASHBOARD_VIEWER_USERNAME && env.QUEUE_DASHBOARD_VIEWER_PASSWORD
        ? { username: env.QUEUE_DASHBOARD_VIEWER_USERNAME, password: env.QUEUE_DASHBOARD_VIEWER_PASSWORD }
        : undefined,
    queueDashboardOn: env.QUEUE_DASHBOARD_ON,
    corsOrigins: (env.CORS_ORIGINS ?? []).map((origin) => new URL(origin).origin),
    trustProxy: env.TRUST_PROXY,
    httpTimeouts: {
      keepAliveMs: env.HTTP_KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
      headersMs: env.HTTP_HEADERS_TIMEOUT_SECONDS * 1000,
      requestMs: env.HTTP_REQUEST_TIMEOUT_SECONDS * 1000,
    },
    dependencyTimeouts: {
      redisCommandMs: env.REDIS_COMMAND_TIMEOUT_MS,
      redisConnectMs: env.REDIS_CONNECT_TIMEOUT_MS,
      databaseConnectMs: env.DATABASE_CONNECT_TIMEOUT_MS,
      databaseStatementMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
    },
    jobLockMs: env.JOB_LOCK_MS,
    jobStalledCheckMs: env.JOB_STALLED_CHECK_MS,
    jobRetryDelayMs: env.JOB_RETRY_DELAY_MS,
    documentStuckAfterSeconds: env.DOCUMENT_STUCK_AFTER_SECONDS,
    documentSweepIntervalSeconds: env.DOCUMENT_SWEEP_INTERVAL_SECONDS,
    importStuckAfterSeconds: env.IMPORT_STUCK_AFTER_SECONDS,
    webhookStuckAfterSeconds: env.WEBHOOK_STUCK_AFTER_SECONDS,
    callRetentionDays: env.CALL_RETENTION_DAYS,
    extractionTimeoutSeconds: env.EXTRACTION_TIMEOUT_SECONDS,
    crawlDelayMs: env.CRAWL_DELAY_MS,
    analysisTranscriptMaxTokens: env.ANALYSIS_TRANSCRIPT_MAX_TOKENS,
    modelProvider:
      env.LLM_BASE_URL && env.LLM_MODEL
        ? {
            baseUrl: env.LLM_BASE_URL.replace(/\/+$/, ''),
            apiKey: env.LLM_API_KEY,
            model: env.LLM_MODEL,
            timeoutSeconds: env.LLM_TIMEOUT_SECONDS,
            maxRetries: env.LLM_MAX_RETRIES,
            concurrency: env.LLM_CONCURRENCY,
            embeddingsModel: env.EMBEDDINGS_MODEL,
            embeddingsDimensions: env.EMBEDDINGS_DIMENSIONS,
          }
        : undefined,
  });
}
