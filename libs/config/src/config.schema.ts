import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** A whole number within bounds, with messages an operator can act on. */
const integer = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * Express's `trust proxy`: `false` (never read X-Forwarded-For), `true` (the left-most address, whoever sent it), a
 * number of proxy hops to trust, or addresses, CIDR ranges and range names whose X-Forwarded-For entries are trusted.
 */
const trustProxy = z.string().transform((value, context) => {
  const text = value.trim();
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^\d{1,2}$/.test(text)) return Number(text);
  const entries = text.split(',').map((entry) => entry.trim());
  const valid = (entry: string) =>
    PROXY_RANGE_NAMES.includes(entry) ||
    ipaddr.isValid(entry) ||
    (entry.includes('/') &&
      (() => {
        try {
          ipaddr.parseCIDR(entry);
          return true;
        } catch {
          return false;
        }
      })());
  if (entries.length > 0 && entries.every(valid)) return entries.join(',');
  context.addIssue({
    code: 'custom',
    message: `must be true, false, a number of hops, or a comma-separated list of addresses, CIDR ranges or ${PROXY_RANGE_NAMES.join('/')}`,
  });
  return z.NEVER;
});

/** 0 asks the OS for any free port (useful when several workers share a host in tests). */
const port = integer(0, 65535);

/** `host:port` (an IPv6 address in brackets), as managed Redis offerings list their cluster endpoints. */
const CLUSTER_NODE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/** Seed nodes of a Redis Cluster: the client learns the rest of the cluster from any one of them. */
const clusterNodes = z.string().transform((value, context) => {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const valid = (entry: string) => {
    const match = CLUSTER_NODE.exec(entry);
    return match !== null && Number(match[1]) >= 1 && Number(match[1]) <= 65535;
  };
  if (entries.length > 0 && entries.every(valid)) return entries;
  context.addIssue({ code: 'custom', message: 'must be a comma-separated list of host:port' });
  return z.NEVER;
});

/**
 * Every environment variable the service reads, with its default. Defaults work on a development machine
 * with Postgres and Redis on localhost and no `.env` file.
 */
export const environmentSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: port.default(3000),
    WORKER_PORT: port.default(3001),
    METRICS_PORT: port.default(3002),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
      .default('postgres://postgres@127.0.0.1:5432/voice_assistant'),
    DATABASE_REPLICA_URLS: z
      .string()
      .transform((value) =>
        value
          .split(',')
          .map((url) => url.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.string().regex(/^postgres(ql)?:\/\//, 'must be a comma-separated list of postgres:// URLs')))
      .default([]),
    DATABASE_REPLICA_MAX_LAG_SECONDS: integer(1, 3600).default(10),
    DATABASE_CONNECT_TIMEOUT_MS: integer(100, 600_000).default(5000),
    DATABASE_STATEMENT_TIMEOUT_MS: integer(100, 3_600_000).default(10_000),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
      .default('redis://127.0.0.1:6379'),
    REDIS_CLUSTER_NODES: clusterNodes.optional(),
    REDIS_CLUSTER_TLS: booleanFlag.default(false),
    REDIS_USERNAME: z.string().min(1).optional(),
    REDIS_PASSWORD: z.string().min(1).optional(),
    REDIS_COMMAND_TIMEOUT_MS: integer(10, 600_000).default(1000),
    REDIS_CONNECT_TIMEOUT_MS: integer(100, 600_000).default(5000),
    QUEUE_BACKEND: z.enum(['redis', 'postgres']).default('redis'),
    APP_URL: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
    ENCRYPTION_KEY: z
      .string()
      .regex(/^[A-Za-z0-9+/]{43}=?$|^[0-9a-fA-F]{64}$/, 'must be 32 bytes, base64 or hex encoded')
      .optional(),
    RUNTIME_API_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
    WORKER_CONCURRENCY: integer(1, 64).default(4),
    WORKER_LARGE_FILES_AT_ONCE: integer(1, 64).default(1),
    QUEUE_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be 1-64 letters, digits, or _ . : -')
      .default('va'),
    RATE_LIMIT_PER_MINUTE: integer(1).default(600),
    LOGIN_ATTEMPTS_PER_MINUTE: integer(1).default(10),
    // At least one whole upload (20 MB and its multipart framing), or no upload could ever be taken.
    UPLOAD_BUDGET_MB: integer(21, 4096).default(48),
    SESSION_TTL_DAYS: z.coerce
      .number({ error: 'must be a number' })
      .positive('must be more than 0')
      .max(365, 'must be at most 365')
      .default(7),
    SESSION_PURGE_INTERVAL_SECONDS: integer(1).default(3600),
    REGISTRATION_ENABLED: booleanFlag.default(true),
    OUTBOUND_ALLOW_LOOPBACK: booleanFlag.default(false),
    SIP_PROVISIONER: z.enum(['local', 'livekit']).default('local'),
    LIVEKIT_URL: z.url().optional(),
    LIVEKIT_API_KEY: z.string().min(1).optional(),
    LIVEKIT_API_SECRET: z.string().min(1).optional(),
    CALL_STALE_AFTER_MINUTES: integer(1, 10_080).default(120),
    ACCOUNT_MAX_CONCURRENT_CALLS: integer(1, 1_000_000).default(10),
    LIVE_STREAMS_PER_PROCESS: integer(1, 100_000).default(2000),
    TRANSFER_BRIEFING_TIMEOUT_SECONDS: integer(0, 60).default(20),
    CALL_DIALER: z.enum(['local', 'livekit']).default('local'),
    LIVEKIT_AGENT_NAME: z.string().min(1).max(128).default('voice-assistant'),
    LIVEKIT_REQUEST_TIMEOUT_SECONDS: integer(1, 120).default(10),
    WEB_CALL_TOKEN_TTL_SECONDS: integer(30, 600).default(600),
    SIP_RECONCILE_INTERVAL_SECONDS: integer(10, 86400).default(600),
    SIP_RECONCILE_GRACE_SECONDS: integer(1, 86400).default(900),
    DIALER_INTERVAL_SECONDS: integer(1, 3600).default(15),
    DIAL_LEASE_SECONDS: integer(5, 3600).default(60),
    LOCAL_DIALER_DEMO_MS: integer(0, 600_000).default(0),
    LOCAL_DIALER_LATENCY_MS: integer(0, 600_000).default(0),
    SIP_PROVISION_TIMEOUT_SECONDS: integer(1, 120).default(20),
    SIP_OUTBOUND_PROXY_ADDRESS: z
      .string()
      .regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be a host or host:port')
      .optional(),
    LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    SHUTDOWN_GRACE_SECONDS: integer(1, 600).default(25),
    QUEUE_DASHBOARD_USERNAME: z
      .string()
      .regex(/^[^:]{1,64}$/, 'must be 1-64 characters without ":"')
      .optional(),
    QUEUE_DASHBOARD_PASSWORD: z.string().min(12, 'must be at least 12 characters').optional(),
    QUEUE_DASHBOARD_VIEWER_USERNAME: z
      .string()
      .regex(/^[^:]{1,64}$/, 'must be 1-64 characters without ":"')
      .optional(),
    QUEUE_DASHBOARD_VIEWER_PASSWORD: z.string().min(12, 'must be at least 12 characters').optional(),
    QUEUE_DASHBOARD_ON: z.enum(['public', 'metrics'], { message: 'must be public or metrics' }).default('public'),
    SHUTDOWN_DRAIN_SECONDS: integer(0, 120).default(5),
    HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: integer(1, 3600).default(65),
    HTTP_HEADERS_TIMEOUT_SECONDS: integer(1, 600).default(20),
    HTTP_REQUEST_TIMEOUT_SECONDS: integer(1, 3600).default(60),
    TRUST_PROXY: trustProxy.default('loopback'),
    CORS_ORIGINS: z
      .string()
      .transform((value) =>
        value
          .split(',')
          .map((origin) => origin.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.url({ protocol: /^https?$/, message: 'must be a comma-separated list of http(s) origins' })))
      .optional(),
    JOB_LOCK_MS: integer(1000).default(30_000),
    JOB_STALLED_CHECK_MS: integer(500).default(30_000),
    JOB_RETRY_DELAY_MS: integer(10).default(5000),
    DOCUMENT_STUCK_AFTER_SECONDS: integer(1).default(900),
    DOCUMENT_SWEEP_INTERVAL_SECONDS: integer(1).default(60),
    IMPORT_STUCK_AFTER_SECONDS: integer(2, 86_400).default(60),
    WEBHOOK_STUCK_AFTER_SECONDS: integer(2, 86_400).default(300),
    CALL_RETENTION_DAYS: integer(1, 36_500).optional(),
    EXTRACTION_TIMEOUT_SECONDS: integer(1, 3600).default(180),
    CRAWL_DELAY_MS: integer(0, 10_000).default(500),
    LLM_BASE_URL: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
    LLM_API_KEY: z.string().max(4096, 'must be at most 4096 characters').optional(),
    LLM_MODEL: z.string().max(256, 'must be at most 256 characters').optional(),
    LLM_TIMEOUT_SECONDS: integer(1, 600).default(60),
    LLM_MAX_RETRIES: integer(0, 10).default(4),
    LLM_CONCURRENCY: integer(1, 64).default(4),
    EMBEDDINGS_MODEL: z.string().max(256, 'must be at most 256 characters').optional(),
    // pgvector's limit on a stored vector's dimensions.
    EMBEDDINGS_DIMENSIONS: integer(1, 16_000).optional(),
    ANALYSIS_TRANSCRIPT_MAX_TOKENS: integer(1000, 2_000_000).default(100_000),
  })
  .superRefine((env, context) => {
    for (const setting of ['SIP_PROVISIONER', 'CALL_DIALER'] as const) {
      if (env[setting] !== 'livekit') continue;
      for (const name of ['LIVEKIT_URL', 'LIVEKIT_API_KEY', 'LIVEKIT_API_SECRET'] as const) {
        if (!env[name]) {
          context.addIssue({ code: 'custom', path: [name], message: `is required when ${setting}=livekit` });
        }
      }
    }
    if (Boolean(env.QUEUE_DASHBOARD_USERNAME) !== Boolean(env.QUEUE_DASHBOARD_PASSWORD)) {
      const missing = env.QUEUE_DASHBOARD_USERNAME ? 'QUEUE_DASHBOARD_PASSWORD' : 'QUEUE_DASHBOARD_USERNAME';
      context.addIssue({ code: 'custom', path: [missing], message: 'is required to turn the queue dashboard on' });
    }
    if (Boolean(env.QUEUE_DASHBOARD_VIEWER_USERNAME) !== Boolean(env.QUEUE_DASHBOARD_VIEWER_PASSWORD)) {
      const missing = env.QUEUE_DASHBOARD_VIEWER_USERNAME
        ? 'QUEUE_DASHBOARD_VIEWER_PASSWORD'
        : 'QUEUE_DASHBOARD_VIEWER_USERNAME';
      context.addIssue({ code: 'custom', path: [missing], message: 'is required for a read-only dashboard login' });
    }
    if (env.QUEUE_DASHBOARD_VIEWER_USERNAME && env.QUEUE_DASHBOARD_VIEWER_USERNAME === env.QUEUE_DASHBOARD_USERNAME) {
      context.addIssue({
        code: 'custom',
        path: ['QUEUE_DASHBOARD_VIEWER_USERNAME'],
        message: 'must differ from QUEUE_DASHBOARD_USERNAME',
      });
    }
    if (env.SHUTDOWN_DRAIN_SECONDS >= env.SHUTDOWN_GRACE_SECONDS) {
      context.addIssue({
        code: 'custom',
        path: ['SHUTDOWN_DRAIN_SECONDS'],
        message: 'must be less than SHUTDOWN_GRACE_SECONDS',
      });
    }
    if (!env.LLM_BASE_URL) {
      // Without a provider these would be silently ignored: say so rather than run without what was asked for.
      for (const name of ['LLM_API_KEY', 'LLM_MODEL', 'EMBEDDINGS_MODEL'] as const) {
        if (env[name])
          context.addIssue({
            code: 'custom',
            path: [name],
            message: 'is set but LLM_BASE_URL is not (for OpenAI itself: LLM_BASE_URL=https://api.openai.com/v1)',
          });
      }
    } else if (!env.LLM_MODEL) {
      context.addIssue({ code: 'custom', path: ['LLM_MODEL'], message: 'is required when LLM_BASE_URL is set' });
    }
    if (env.EMBEDDINGS_DIMENSIONS !== undefined && !env.EMBEDDINGS_MODEL) {
      context.addIssue({
        code: 'custom',
        path: ['EMBEDDINGS_DIMENSIONS'],
        message: 'is set but EMBEDDINGS_MODEL is not',
      });
    }
    if (env.HTTP_HEADERS_TIMEOUT_SECONDS > env.HTTP_REQUEST_TIMEOUT_SECONDS) {
      // Node refuses a server whose headers may take longer than the whole request.
      context.addIssue({
        code: 'custom',
        path: ['HTTP_HEADERS_TIMEOUT_SECONDS'],
        message: 'must be at most HTTP_REQUEST_TIMEOUT_SECONDS',
      });
    }
  });

export type Environment = z.infer<typeof environmentSchema>;
