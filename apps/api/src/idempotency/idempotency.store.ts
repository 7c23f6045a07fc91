import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError, IDEMPOTENCY_TTL_HOURS } from '@app/contracts';

/** How long a duplicate waits for the first request with its key to finish before giving up with 409. */
const WAIT_FOR_FIRST_MS = 15_000;
const POLL_MS = 50;

export type Claim = { kind: 'first' } | { kind: 'replay'; status: number; body: unknown } | { kind: 'mismatch' };

/**
 * What identifies "the same request": method, path, and the parsed body (fields in a stable order, an uploaded
 * file by its content's digest), so a retry of the same create matches however its JSON was formatted.
 */
export function requestFingerprint(request: Request): string {
  const hash = createHash('sha256').update(`${request.method} ${request.originalUrl}\n`);
  hash.update(stableJson(request.body));
  return hash.digest('hex');
}

function stableJson(value: unknown): string {
  if (Buffer.isBuffer(value)) return `"sha256:${createHash('sha256').update(value).digest('hex')}"`;
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

@Injectable()
export class IdempotencyStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Takes the key for this request, or says what to answer instead. The primary key makes the first insert win
   * however many duplicates arrive together; the others wait for its answer.
   */
  async claim(userId: number, key: string, fingerprint: string): Promise<Claim> {
    const deadline = Date.now() + WAIT_FOR_FIRST_MS;
    for (;;) {
      const inserted = await this.dataSource.query(
        `INSERT INTO idempotency_keys (user_id, key, request_hash) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, key) DO UPDATE
           SET request_hash = EXCLUDED.request_hash, response_status = NULL, response_body = NULL, created_at = now()
           WHERE idempotency_keys.created_at < now() - make_interval(hours => $4)
         RETURNING 1`,
        [userId, key, fingerprint, IDEMPOTENCY_TTL_HOURS],
      );
      if (inserted.length > 0) return { kind: 'first' };
      const [row] = await this.dataSource.query(
        `SELECT request_hash, response_status, response_body FROM idempotency_keys WHERE user_id = $1 AND key = $2`,
        [userId, key],
      );
      if (!row) continue; // released by a first request that failed: try to take it
      if (row.request_hash !== fingerprint) return { kind: 'mismatch' };
      if (row.response_status !== null) return { kind: 'replay', status: row.response_status, body: row.response_body };
      if (Date.now() > deadline) {
        throw new DomainError('idempotency_in_progress', 409, {
          message: 'A request with this Idempotency-Key is still being processed. Please try again.',
        });
      }
      await sleep(POLL_MS);
    }
  }

  async complete(userId: number, key: string, status: number, body: unknown): Promise<void> {
    await this.dataSource.query(
      `UPDATE idempotency_keys SET response_status = $3, response_body = $4 WHERE user_id = $1 AND key = $2`,
      [userId, key, status, JSON.stringify(body ?? null)],
    );
  }

  async release(userId: number, key: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2`, [userId, key]);
  }
}
