import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** A key as a duplicate or a retry finds it. */
export interface IdempotencyKeyRow {
  request_hash: string;
  response_status: number | null;
  response_sealed: string | null;
}

/** What a create recorded under its key before its answer was kept: the resource, and its one-time secret sealed. */
export interface CreatedUnderKey {
  kind: string;
  id: number;
  secretSealed: string | null;
}

/**
 * `Idempotency-Key`s of the user API, by account: who holds a key (a lease its request renews), the answer kept for
 * replays (sealed by the caller), and what a create made under it (written in the create's transaction).
 */
@Injectable()
export class IdempotencyKeysRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /**
   * Takes the key for a new run of the request, and answers whether it did: a new key, a key older than `ttlHours`
   * (it no longer exists for the client), or the same request's key whose run died before it created anything (its
   * lease lapsed). The primary key makes one of many duplicates arriving together win.
   */
  async take(userId: number, key: string, hash: string, ttlHours: number, leaseSeconds: number): Promise<boolean> {
    const rows: unknown[] = await this.manager.query(
      `INSERT INTO idempotency_keys (user_id, key, request_hash, lease_until)
       VALUES ($1, $2, $3, now() + make_interval(secs => $5))
       ON CONFLICT (user_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, response_status = NULL, response_sealed = NULL,
             created_kind = NULL, created_id = NULL, created_secret_sealed = NULL,
             created_at = now(), lease_until = EXCLUDED.lease_until
         WHERE idempotency_keys.created_at < now() - make_interval(hours => $4)
            OR (idempotency_keys.response_status IS NULL AND idempotency_keys.created_kind IS NULL
                AND idempotency_keys.request_hash = EXCLUDED.request_hash
                AND (idempotency_keys.lease_until IS NULL OR idempotency_keys.lease_until < now()))
       RETURNING 1`,
      [userId, key, hash, ttlHours, leaseSeconds],
    );
    return rows.length > 0;
  }

  /**
   * Takes over the same request's key whose run created its resource and died before its answer was kept (its lease
   * lapsed), and answers what it created; once, however many retries arrive together.
   */
  async takeOverCreated(
    userId: number,
    key: string,
    hash: string,
    leaseSeconds: number,
  ): Promise<CreatedUnderKey | undefined> {
    const [rows] = (await this.manager.query(
      `UPDATE idempotency_keys SET lease_until = now() + make_interval(secs => $4)
        WHERE user_id = $1 AND key = $2 AND request_hash = $3
          AND response_status IS NULL AND created_kind IS NOT NULL
          AND (lease_until IS NULL OR lease_until < now())
        RETURNING created_kind, created_id, created_secret_sealed`,
      [userId, key, hash, leaseSeconds],
    )) as [{ created_kind: string; created_id: string; created_secret_sealed: string | null }[], number];
    const [row] = rows;
    return row && { kind: row.created_kind, id: Number(row.created_id), secretSealed: row.created_secret_sealed };
  }

  async find(userId: number, key: string): Promise<IdempotencyKeyRow | undefined> {
    const [row] = (await this.manager.query(
      `SELECT request_hash, response_status, response_sealed FROM idempotency_keys WHERE user_id = $1 AND key = $2`,
      [userId, key],
    )) as IdempotencyKeyRow[];
    return row;
  }

  /** Keeps the key held by its running request for another `leaseSeconds`. */
  async renew(userId: number, key: string, leaseSeconds: number): Promise<void> {
    await this.changed(
      `UPDATE idempotency_keys SET lease_until = now() + make_interval(secs => $3)
        WHERE user_id = $1 AND key = $2 AND response_status IS NULL`,
      [userId, key, leaseSeconds],
    );
  }

  /** Records what the create made; run in the create's own transaction, so the two commit together. */
  async recordCreated(userId: number, key: string, created: CreatedUnderKey): Promise<void> {
    await this.changed(
      `UPDATE idempotency_keys SET created_kind = $3, created_id = $4, created_secret_sealed = $5
        WHERE user_id = $1 AND key = $2`,
      [userId, key, created.kind, created.id, created.secretSealed],
    );
  }

  /** Keeps the answer for replays; what was created is no longer needed once the answer is. */
  async complete(userId: number, key: string, status: number, sealed: string): Promise<void> {
    await this.changed(
      `UPDATE idempotency_keys
          SET response_status = $3, response_sealed = $4, lease_until = NULL, created_secret_sealed = NULL
        WHERE user_id = $1 AND key = $2`,
      [userId, key, status, sealed],
    );
  }

  async release(userId: number, key: string): Promise<void> {
    await this.changed(`DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2`, [userId, key]);
  }

  /** Keys older than `ttlHours` answer nothing any more (the worker's maintenance). */
  purgeOlderThan(ttlHours: number): Promise<number> {
    return this.changed(`DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`, [
      ttlHours,
    ]);
  }
}
