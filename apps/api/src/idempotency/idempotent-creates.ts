import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { SecretBox, SecretContexts } from '@app/crypto';
import { type CreatedUnderKey, IdempotencyKeysRepository, type Transaction } from '@app/database';
import type { AuthenticatedUser } from '../auth/auth-context';

/** What the user API's creates make, each recorded under the request's Idempotency-Key. */
export const CREATED_KINDS = [
  'api-key',
  'assistant',
  'call',
  'campaign',
  'document',
  'folder',
  'knowledgebase',
  'label',
  'lead',
  'lead-import',
  'sip-trunk',
  'tool',
  'web-call',
] as const;
export type CreatedKind = (typeof CREATED_KINDS)[number];

/**
 * Answers a create from what it made, as the create itself would have answered: its message and the resource as it
 * is now (a SIP trunk once its provisioning has settled, or the error the create would have met). `secret` is the
 * one-time secret the create recorded with it (an API key's token).
 */
export type CreateRecovery = (user: AuthenticatedUser, id: number, secret: string | undefined) => Promise<unknown>;

/** The account and key of the request being served, when it carries an Idempotency-Key. */
const currentKey = new AsyncLocalStorage<{ userId: number; key: string }>();

/**
 * Exactly-once creates across a crash. A create records what it made under the request's key in its own transaction
 * (`record`), so the record and the resource commit together; if the process dies before the answer is kept, the
 * retry that takes the key over answers that resource through the create's recovery instead of creating it again
 * (or meeting its own first attempt as a conflict). Every kind must have its recovery, checked at boot.
 */
@Injectable()
export class IdempotentCreates implements OnApplicationBootstrap {
  private readonly recoveries = new Map<CreatedKind, CreateRecovery>();

  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly secrets: SecretBox,
  ) {}

  /** Runs a request's handler under its key: the creates it makes are recorded under that key. */
  static runUnder<T>(userId: number, key: string, work: () => T): T {
    return currentKey.run({ userId, key }, work);
  }

  /** Called by the service that owns `kind`, once, at its module's init. */
  recoverWith(kind: CreatedKind, recovery: CreateRecovery): void {
    if (this.recoveries.has(kind)) throw new Error(`the ${kind} create has two recoveries`);
    this.recoveries.set(kind, recovery);
  }

  /**
   * Records the resource a create made, in the create's transaction. Outside a request with a key it does nothing.
   */
  async record(transaction: Transaction, kind: CreatedKind, id: number, secret?: string): Promise<void> {
    const current = currentKey.getStore();
    if (!current) return;
    const secretSealed =
      secret === undefined
        ? null
        : this.secrets.seal(secret, SecretContexts.idempotentCreate(current.userId, current.key));
    await this.keys.within(transaction).recordCreated(current.userId, current.key, { kind, id, secretSealed });
  }

  /** The answer of the create whose run died after making `created`. */
  recover(user: AuthenticatedUser, key: string, created: CreatedUnderKey): Promise<unknown> {
    const recovery = this.recoveries.get(created.kind as CreatedKind);
    if (!recovery) throw new Error(`no recovery for a ${created.kind} create`);
    const secret =
      created.secretSealed === null
        ? undefined
        : this.secrets.open(created.secretSealed, SecretContexts.idempotentCreate(user.id, key));
    return recovery(user, created.id, secret);
  }

  onApplicationBootstrap(): void {
    const missing = CREATED_KINDS.filter((kind) => !this.recoveries.has(kind));
    if (missing.length > 0) throw new Error(`creates without a recovery after a crash: ${missing.join(', ')}`);
  }
}
