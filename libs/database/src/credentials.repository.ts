import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SessionToken } from './entities/session-token.entity';
import { queryPool } from './pool-query';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** What a bearer token is: an account's API key or a login session (call tokens are the calls repository's). */
export type CredentialKind = 'apiKey' | 'session';

export interface CredentialRow {
  token_id: number;
  last_used_at: Date | null;
  user_id: number;
  user_name: string;
  user_email: string;
}

const TABLES: Record<CredentialKind, string> = { apiKey: 'api_keys', session: 'session_tokens' };

/**
 * The credentials a request authenticates with, found by their token's SHA-256 (API keys and sessions), and the
 * sessions login starts and logout ends. The look-up and its `last_used_at` refresh run on every authenticated
 * request, straight on the pool (`queryPool`).
 */
@Injectable()
export class CredentialsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** The credential with this token hash and its user; a session only while it has not expired. */
  async find(kind: CredentialKind, tokenHash: string): Promise<CredentialRow | undefined> {
    const table = TABLES[kind];
    const notExpired = kind === 'session' ? 'AND credential.expires_at > now()' : '';
    const rows = await queryPool<CredentialRow>(
      this.dataSource,
      `SELECT credential.id AS token_id, credential.last_used_at, users.id AS user_id,
              users.name AS user_name, users.email AS user_email
         FROM ${table} credential
         JOIN users ON users.id = credential.user_id
        WHERE credential.token_hash = $1 ${notExpired}`,
      [tokenHash],
    );
    return rows[0];
  }

  /** Marks the credential used now, unless another request did within `precisionSeconds`. */
  async touch(kind: CredentialKind, tokenId: number, precisionSeconds: number): Promise<void> {
    await queryPool(
      this.dataSource,
      `UPDATE ${TABLES[kind]} SET last_used_at = now()
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2))`,
      [tokenId, precisionSeconds],
    );
  }

  async startSession(ownerId: number, name: string, tokenHash: string, expiresAt: Date): Promise<void> {
    await this.manager.getRepository(SessionToken).insert({ userId: ownerId, name, tokenHash, expiresAt });
  }

  async endSession(ownerId: number, sessionId: number): Promise<void> {
    await this.manager.getRepository(SessionToken).delete({ id: sessionId, userId: ownerId });
  }
}
