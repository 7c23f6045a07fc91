/**
 * The reference of the list-throughput benchmark: `node:http` and `pg` doing what the API must do for
 * `GET /api/user/knowledgebases` and `GET /api/user/api-keys` with a bearer token, and nothing more: the same
 * token check and lookup, the same `last_used_at` refresh, the same list SQL and the same JSON body.
 * No framework, logging, rate limit or metrics. Started as a child process by bench/list-throughput.ts:
 *
 *   DATABASE_URL=... PORT=0 node -r ts-node/register/transpile-only bench/support/bare-list-server.ts
 *
 * The lead and call list benchmarks also pass their cases (LIST_CASES: a JSON object from each case's request path
 * to its statements) and a Redis prefix (QUEUE_PREFIX): for each of those paths the server looks up the token while
 * it counts the request against the credential with the API's own Redis counter, as the API does (a per-token rate
 * limit is part of the contract), then runs the case's statements side by side and answers the rows and the total.
 * That is the least an HTTP server must do for the request, so the API's time over it is the framework's and the
 * API's own code, and its time over the bare SQL is what any HTTP server adds on this machine.
 *
 * Prints `listening <port>` once it accepts connections.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { loadConfig } from '../../libs/config/src/app-config';
import { KNOWLEDGEBASE_SUMMARIES_SQL } from '../../libs/database/src/knowledgebase-summaries';
import { RedisWindowCounters } from '../../libs/platform/src/counters/window-counters';
import { hashToken, parseToken } from '../../libs/platform/src/security/tokens';
import { runStatements, type Statement } from './list-cases';

/** The API's own pool size (dataSourceOptions' default). */
const POOL_SIZE = 10;
const LAST_USED_PRECISION_SECONDS = 60;

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: POOL_SIZE });

interface Caller {
  userId: number;
}

interface Credential {
  kind: NonNullable<ReturnType<typeof parseToken>>;
  /** The token's digest, as the database stores it and the rate limit keys it. */
  digest: string;
}

/** The request's well-formed bearer token, or null. */
function credentialOf(request: IncomingMessage): Credential | null {
  const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
  const kind = match ? parseToken(match[1]) : null;
  return match && kind ? { kind, digest: hashToken(match[1]) } : null;
}

async function authenticate({ kind, digest }: Credential): Promise<Caller | null> {
  const table = kind === 'apiKey' ? 'api_keys' : 'session_tokens';
  const notExpired = kind === 'session' ? 'AND credential.expires_at > now()' : '';
  const { rows } = await pool.query(
    `SELECT credential.id AS token_id, credential.last_used_at, users.id AS user_id,
            users.name AS user_name, users.email AS user_email
       FROM ${table} credential
       JOIN users ON users.id = credential.user_id
      WHERE credential.token_hash = $1 ${notExpired}`,
    [digest],
  );
  const row = rows[0];
  if (!row) return null;
  if (!row.last_used_at || row.last_used_at.getTime() <= Date.now() - LAST_USED_PRECISION_SECONDS * 1000) {
    await pool.query(
      `UPDATE ${table} SET last_used_at = now()
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2))`,
      [row.token_id, LAST_USED_PRECISION_SECONDS],
    );
  }
  return { userId: row.user_id };
}

const statusLabels: Record<string, string> = {
  empty: 'Empty',
  processing: 'Processing',
  active: 'Active',
  failed: 'Failed',
};

async function knowledgebases(caller: Caller): Promise<unknown> {
  const { rows } = await pool.query(KNOWLEDGEBASE_SUMMARIES_SQL, [caller.userId, null]);
  return {
    data: rows.map((row) => {
      const status =
        row.documents_count === 0
          ? 'empty'
          : row.processing_count > 0
            ? 'processing'
            : row.failed_count > 0
              ? 'failed'
              : 'active';
      return {
        id: row.id,
        name: row.name,
        description: row.description,
        status,
        status_label: statusLabels[status],
        documents_count: row.documents_count,
        assistants_count: row.assistants_count,
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
      };
    }),
  };
}

async function apiKeys(caller: Caller): Promise<unknown> {
  const { rows } = await pool.query(
    `SELECT id, name, last_used_at, created_at FROM api_keys WHERE user_id = $1 ORDER BY id DESC`,
    [caller.userId],
  );
  return {
    api_keys: rows.map((row) => ({
      id: row.id,
      name: row.name,
      last_used_at: row.last_used_at?.toISOString() ?? null,
      created_at: row.created_at.toISOString(),
    })),
  };
}

const routes: Record<string, (caller: Caller) => Promise<unknown>> = {
  '/api/user/knowledgebases': knowledgebases,
  '/api/user/api-keys': apiKeys,
};

const listCases = JSON.parse(process.env.LIST_CASES ?? '{}') as Record<string, Statement[]>;
const counters = process.env.QUEUE_PREFIX
  ? new RedisWindowCounters(
      // The API's configuration of its counters' Redis (timeouts, prefix), as the API would load it.
      loadConfig({
        REDIS_URL: process.env.REDIS_URL!,
        QUEUE_PREFIX: process.env.QUEUE_PREFIX,
        DATABASE_URL: process.env.DATABASE_URL!,
        ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      }),
      (error) => console.error(error.message),
    )
  : undefined;

/**
 * A list case: the page's rows and the total, from the statements the benchmark gave for the path (the first is the
 * page's), round by round.
 */
async function listCase(credential: Credential, statements: Statement[]): Promise<unknown> {
  const [caller] = await Promise.all([
    authenticate(credential),
    counters?.hit(`rate:${credential.kind}:${credential.digest}`, 60_000),
  ]);
  if (!caller) return null;
  const [page, total] = await runStatements(pool, statements);
  // A list without an exact total (the slim pages) runs one statement, or its further ones are not a count.
  return total?.rows.length === 1 && Object.keys(total.rows[0]).length === 1
    ? { data: page.rows, total: Number(Object.values(total.rows[0])[0] ?? 0) }
    : { data: page.rows };
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

const server = createServer((request, response) => {
  const path = request.method === 'GET' ? (request.url ?? '') : '';
  const statements = listCases[path];
  const route = routes[path];
  if (!statements && !route) return send(response, 404, { message: 'Not found.' });
  const credential = credentialOf(request);
  if (!credential) return send(response, 401, {});
  const answer = statements
    ? listCase(credential, statements)
    : authenticate(credential).then((caller) => (caller ? route(caller) : null));
  answer
    .then((body) => send(response, body ? 200 : 401, body ?? {}))
    .catch((error: Error) => send(response, 500, { message: error.message }));
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.end();
  void counters?.onApplicationShutdown();
});
