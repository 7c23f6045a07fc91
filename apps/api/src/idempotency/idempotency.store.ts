import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError, IDEMPOTENCY_TTL_HOURS } from '@app/contracts';
import { SecretBox, SecretContexts } from '@app/crypto';
import { type CreatedUnderKey, IdempotencyKeysRepository } from '@app/database';

/** How long a duplicate waits for the first request with its key to finish before giving up with 409. */
const WAIT_FOR_FIRST_MS = 15_000;
const POLL_MS = 50;

export type Claim =
  | { kind: 'first' }
  | { kind: 'recover'; created: CreatedUnderKey }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'mismatch' };

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

/**
 * How long a key being processed stays held without word from its request; the request renews it a few times
 * within this, so only a request whose process died lets it lapse.
 */
export const IDEMPOTENCY_LEASE_SECONDS = 10;

@Injectable()
export class IdempotencyStore {
  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly secrets: SecretBox,
  ) {}

  /**
   * Takes the key for this request, or says what to answer instead. The first of many duplicates arriving together
   * wins; the others wait for its answer. A key whose request was lost with its process (its lease lapsed, no answer
   * kept) is taken over by the same request, once: to run it again if it had created nothing, or to answer what it
   * had created.
   */
  async claim(userId: number, key: string, fingerprint: string): Promise<Claim> {
    const deadline = Date.now() + WAIT_FOR_FIRST_MS;
    for (;;) {
      if (await this.keys.take(userId, key, fingerprint, IDEMPOTENCY_TTL_HOURS, IDEMPOTENCY_LEASE_SECONDS)) {
        return { kind: 'first' };
      }
      const row = await this.keys.find(userId, key);
      if (!row) continue; // released by a first request that failed: try to take it
      if (row.request_hash !== fingerprint) return { kind: 'mismatch' };
      if (row.response_status !== null && row.response_sealed !== null) {
        const body = JSON.parse(this.secrets.open(row.response_sealed, SecretContexts.idempotentAnswer(userId, key)));
        return { kind: 'replay', status: row.response_status, body };
      }
      const created = await this.keys.takeOverCreated(userId, key, fingerprint, IDEMPOTENCY_LEASE_SECONDS);
      if (created) return { kind: 'recover', created };
      if (Date.now() > deadline) {
        throw new DomainError('idempotency_in_progress', 409, {
          message: 'A request with this Idempotency-Key is still being processed. Please try again.',
        });
      }
      await sleep(POLL_MS);
    }
  }

  /** Keeps the key held while its request runs. */
  renew(userId: number, key: string): Promise<void> {
    return this.keys.renew(userId, key, IDEMPOTENCY_LEASE_SECONDS);
  }

  /** Keeps the answer for replays, sealed: it can carry a secret shown only in this answer. */
  complete(userId: number, key: string, status: number, body: unknown): Promise<void> {
    const sealed = this.secrets.seal(JSON.stringify(body ?? null), SecretContexts.idempotentAnswer(userId, key));
    return this.keys.complete(userId, key, status, sealed);
  }

  release(userId: number, key: string): Promise<void> {
    return this.keys.release(userId, key);
  }
}
