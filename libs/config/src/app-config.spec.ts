import { ConfigurationError, loadConfig, loadDatabaseUrl } from './app-config';

const key = Buffer.alloc(32, 1).toString('base64');

describe('loadConfig', () => {
  it('has working defaults for a development machine', () => {
    const config = loadConfig({ ENCRYPTION_KEY: key });
    expect(config).toMatchObject({
      port: 3000,
      workerPort: 3001,
      metricsPort: 3002,
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/voice_assistant',
      redisUrl: 'redis://127.0.0.1:6379',
      queuePrefix: 'va',
      queueBackend: 'redis',
      rateLimitPerMinute: 600,
      outboundAllowLoopback: false,
      sipProvisioner: 'local',
      sessionTtlSeconds: 7 * 86_400,
      accountMaxConcurrentCalls: 10,
    });
    expect(config.encryptionKey).toHaveLength(32);
  });

  it('names a Redis Cluster by its seed nodes, with TLS and credentials, and then needs no REDIS_URL', () => {
    const config = loadConfig({
      ENCRYPTION_KEY: key,
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://db/va',
      APP_URL: 'https://api.example.com',
      REDIS_CLUSTER_NODES: 'redis-0.example.com:6379, 10.0.0.7:7001,[fd00::1]:7002',
      REDIS_CLUSTER_TLS: 'true',
      REDIS_USERNAME: 'service',
      REDIS_PASSWORD: 'a secret',
    });
    expect(config.redisCluster).toEqual({
      nodes: [
        { host: 'redis-0.example.com', port: 6379 },
        { host: '10.0.0.7', port: 7001 },
        { host: 'fd00::1', port: 7002 },
      ],
      tls: true,
    });
    expect(config.redisCredentials).toEqual({ username: 'service', password: 'a secret' });
    expect(loadConfig({ ENCRYPTION_KEY: key }).redisCluster).toBeUndefined();
  });

  it.each(['redis-0', 'redis-0:', 'redis-0:70000', 'redis://redis-0:6379', ','])(
    'refuses REDIS_CLUSTER_NODES=%j, naming the variable',
    (nodes) => {
      expect(() => loadConfig({ ENCRYPTION_KEY: key, REDIS_CLUSTER_NODES: nodes })).toThrow(
        /REDIS_CLUSTER_NODES: must be a comma-separated list of host:port/,
      );
    },
  );

  it('reads TRUST_PROXY as Express takes it, and refuses anything else', () => {
    const trust = (value: string) => loadConfig({ ENCRYPTION_KEY: key, TRUST_PROXY: value }).trustProxy;
    expect(loadConfig({ ENCRYPTION_KEY: key }).trustProxy).toBe('loopback');
    expect([trust('false'), trust('true'), trust('2')]).toEqual([false, true, 2]);
    expect(trust('10.0.0.0/8, loopback,192.0.2.7')).toBe('10.0.0.0/8,loopback,192.0.2.7');
    expect(() => trust('everyone')).toThrow(/TRUST_PROXY/);
    expect(() => trust('10.0.0.0/99')).toThrow(/TRUST_PROXY/);
  });

  it('serves the queue dashboard on the public port unless QUEUE_DASHBOARD_ON says the metrics listener', () => {
    expect(loadConfig({ ENCRYPTION_KEY: key }).queueDashboardOn).toBe('public');
    expect(loadConfig({ ENCRYPTION_KEY: key, QUEUE_DASHBOARD_ON: 'metrics' }).queueDashboardOn).toBe('metrics');
    expect(() => loadConfig({ ENCRYPTION_KEY: key, QUEUE_DASHBOARD_ON: 'admin' })).toThrow(
      /QUEUE_DASHBOARD_ON: must be public or metrics/,
    );
  });

  it('has no model provider unless LLM_BASE_URL names one, and then reads its settings', () => {
    expect(loadConfig({ ENCRYPTION_KEY: key }).modelProvider).toBeUndefined();
    const provider = (environment: NodeJS.ProcessEnv) =>
      loadConfig({
        ENCRYPTION_KEY: key,
        LLM_BASE_URL: 'http://127.0.0.1:11434/v1/',
        LLM_MODEL: 'llama3.1',
        ...environment,
      }).modelProvider;
    expect(provider({})).toEqual({
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: undefined,
      model: 'llama3.1',
      timeoutSeconds: 60,
      maxRetries: 4,
      concurrency: 4,
      embeddingsModel: undefined,
      embeddingsDimensions: undefined,
    });
    expect(
      provider({
        LLM_API_KEY: 'sk-test',
        LLM_TIMEOUT_SECONDS: '30',
        LLM_MAX_RETRIES: '0',
        LLM_CONCURRENCY: '8',
        EMBEDDINGS_MODEL: 'text-embedding-3-small',
        EMBEDDINGS_DIMENSIONS: '512',
      }),
    ).toMatchObject({
      apiKey: 'sk-test',
      timeoutSeconds: 30,
      maxRetries: 0,
      concurrency: 8,
      embeddingsModel: 'text-embedding-3-small',
      embeddingsDimensions: 512,
    });
  });

  it('never names the provider key in a configuration error', () => {
    const secret = 'sk-proj-never-in-a-message-0123456789';
    const load = () => loadConfig({ ENCRYPTION_KEY: key, LLM_API_KEY: secret, LLM_BASE_URL: 'ftp://x' });
    expect(load).toThrow(/LLM_BASE_URL: must be an http\(s\) URL/);
    expect(() => load()).not.toThrow(new RegExp(secret));
  });

  it('needs no Redis address in production when the queues are on Postgres', () => {
    const config = loadConfig({
      ENCRYPTION_KEY: key,
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://db/va',
      APP_URL: 'https://api.example.com',
      QUEUE_BACKEND: 'postgres',
    });
    expect(config.queueBackend).toBe('postgres');
  });

  it('reads DATABASE_REPLICA_URLS as a list of postgres URLs (none by default), and refuses anything else', () => {
    const replicas = (value?: string) =>
      loadConfig({ ENCRYPTION_KEY: key, ...(value === undefined ? {} : { DATABASE_REPLICA_URLS: value }) })
        .databaseReplicaUrls;
    expect(replicas()).toEqual([]);
    expect(replicas(' postgres://r1/va, postgresql://r2:5433/va ,')).toEqual([
      'postgres://r1/va',
      'postgresql://r2:5433/va',
    ]);
    expect(() => replicas('postgres://r1/va,mysql://r2/va')).toThrow(/DATABASE_REPLICA_URLS/);
    expect(() => loadConfig({ ENCRYPTION_KEY: key, DATABASE_REPLICA_MAX_LAG_SECONDS: '0' })).toThrow(
      /DATABASE_REPLICA_MAX_LAG_SECONDS: must be at least 1/,
    );
  });

  it('bounds every wait on Postgres and Redis by default, and reads other bounds in milliseconds', () => {
    expect(loadConfig({ ENCRYPTION_KEY: key }).dependencyTimeouts).toEqual({
      redisCommandMs: 1000,
      redisConnectMs: 5000,
      databaseConnectMs: 5000,
      databaseStatementMs: 10_000,
    });
    const config = loadConfig({
      ENCRYPTION_KEY: key,
      REDIS_COMMAND_TIMEOUT_MS: '250',
      REDIS_CONNECT_TIMEOUT_MS: '2000',
      DATABASE_CONNECT_TIMEOUT_MS: '3000',
      DATABASE_STATEMENT_TIMEOUT_MS: '60000',
    });
    expect(config.dependencyTimeouts).toEqual({
      redisCommandMs: 250,
      redisConnectMs: 2000,
      databaseConnectMs: 3000,
      databaseStatementMs: 60_000,
    });
  });

  it('parses and converts values', () => {
    const config = loadConfig({
      ENCRYPTION_KEY: key,
      PORT: '8080',
      OUTBOUND_ALLOW_LOOPBACK: 'true',
      APP_URL: 'https://x.io/',
    });
    expect([config.port, config.outboundAllowLoopback, config.appUrl]).toEqual([8080, true, 'https://x.io']);
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ WORKER_PORT: '-1' }, 'WORKER_PORT'],
    [{ METRICS_PORT: '65536' }, 'METRICS_PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ OUTBOUND_ALLOW_LOOPBACK: 'maybe' }, 'OUTBOUND_ALLOW_LOOPBACK'],
    [{ ENCRYPTION_KEY: 'short' }, 'ENCRYPTION_KEY'],
    [{ SIP_PROVISIONER: 'livekit' }, 'LIVEKIT_URL'],
    [{ CALL_DIALER: 'livekit' }, 'LIVEKIT_API_KEY'],
    [{ CALL_DIALER: 'phone' }, 'CALL_DIALER'],
    [{ NODE_ENV: 'production', ENCRYPTION_KEY: '' }, 'ENCRYPTION_KEY'],
    [{ NODE_ENV: 'production' }, 'DATABASE_URL'],
    [{ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/va' }, 'REDIS_URL'],
    [{ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/va', REDIS_URL: 'redis://r' }, 'APP_URL'],
    [{ QUEUE_BACKEND: 'kafka' }, 'QUEUE_BACKEND'],
    [{ REDIS_COMMAND_TIMEOUT_MS: '0' }, 'REDIS_COMMAND_TIMEOUT_MS'],
    [{ REDIS_CONNECT_TIMEOUT_MS: 'soon' }, 'REDIS_CONNECT_TIMEOUT_MS'],
    [{ DATABASE_CONNECT_TIMEOUT_MS: '0' }, 'DATABASE_CONNECT_TIMEOUT_MS'],
    [{ DATABASE_STATEMENT_TIMEOUT_MS: '1.5' }, 'DATABASE_STATEMENT_TIMEOUT_MS'],
    [{ LLM_BASE_URL: 'api.openai.com/v1', LLM_MODEL: 'gpt-4o-mini' }, 'LLM_BASE_URL'],
    [{ LLM_BASE_URL: 'https://api.openai.com/v1' }, 'LLM_MODEL'],
    [{ LLM_MODEL: 'gpt-4o-mini' }, 'LLM_MODEL'],
    [{ LLM_API_KEY: 'sk-test' }, 'LLM_API_KEY'],
    [{ EMBEDDINGS_MODEL: 'text-embedding-3-small' }, 'EMBEDDINGS_MODEL'],
    [{ LLM_BASE_URL: 'https://x.io/v1', LLM_MODEL: 'm', EMBEDDINGS_DIMENSIONS: '256' }, 'EMBEDDINGS_DIMENSIONS'],
    [
      { LLM_BASE_URL: 'https://x.io/v1', LLM_MODEL: 'm', EMBEDDINGS_MODEL: 'e', EMBEDDINGS_DIMENSIONS: '0' },
      'EMBEDDINGS_DIMENSIONS',
    ],
    [{ LLM_TIMEOUT_SECONDS: '0' }, 'LLM_TIMEOUT_SECONDS'],
    [{ LLM_MAX_RETRIES: '11' }, 'LLM_MAX_RETRIES'],
    [{ LLM_CONCURRENCY: 'many' }, 'LLM_CONCURRENCY'],
  ])('stops with a message naming the bad variable: %j', (environment, variable) => {
    const load = () => loadConfig({ ENCRYPTION_KEY: key, ...environment });
    expect(load).toThrow(ConfigurationError);
    expect(load).toThrow(new RegExp(`^Invalid configuration:[\\s\\S]*\\b${variable}: `));
  });
});

describe('loadDatabaseUrl', () => {
  it('needs only DATABASE_URL, in production too: no key, no Redis', () => {
    expect(loadDatabaseUrl({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/va' })).toBe('postgres://db/va');
    expect(loadDatabaseUrl({})).toBe('postgres://postgres@127.0.0.1:5432/voice_assistant');
  });

  it('names DATABASE_URL when production has none, or it is not a postgres URL', () => {
    expect(() => loadDatabaseUrl({ NODE_ENV: 'production' })).toThrow(
      new ConfigurationError('Invalid configuration: DATABASE_URL: is required when NODE_ENV=production'),
    );
    expect(() => loadDatabaseUrl({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL: must be a postgres:\/\/ URL/);
  });
});
