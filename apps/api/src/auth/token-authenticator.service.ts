import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { queryPool } from '@app/database';
import { hashToken, parseToken } from '@app/platform';
import type { AuthContext } from './auth-context';

/** How stale `last_used_at` may get before a request refreshes it; avoids a write on every request. */
const LAST_USED_PRECISION_SECONDS = 60;

interface CredentialRow {
  token_id: number;
  last_used_at: Date | null;
  user_id: number;
  user_name: string;
  user_email: string;
}

/**
 * Resolves a bearer token to its user. Malformed tokens (wrong prefix, length or checksum) are refused without
 * a query; valid-looking ones are looked up by hash on every request, so a deleted key or ended session is
 * refused at once.
 */
@Injectable()
export class TokenAuthenticator {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async authenticate(token: string): Promise<AuthContext | null> {
    const kind = parseToken(token);
    // A call token opens only its call's runtime routes, never the user API.
    if (!kind || kind === 'call') return null;
    const table = kind === 'apiKey' ? 'api_keys' : 'session_tokens';
    const notExpired = kind === 'session' ? 'AND credential.expires_at > now()' : '';
    const rows = await queryPool<CredentialRow>(
      this.dataSource,
      `SELECT credential.id AS token_id, credential.last_used_at, users.id AS user_id,
              users.name AS user_name, users.email AS user_email
         FROM ${table} credential
         JOIN users ON users.id = credential.user_id
        WHERE credential.token_hash = $1 ${notExpired}`,
      [hashToken(token)],
    );
    const row = rows[0];
    if (!row) return null;
    await this.touch(table, row);
    return {
      user: { id: row.user_id, name: row.user_name, email: row.user_email },
      tokenKind: kind,
      tokenId: row.token_id,
    };
  }

  private async touch(table: string, row: CredentialRow): Promise<void> {
    const staleBefore = Date.now() - LAST_USED_PRECISION_SECONDS * 1000;
    if (row.last_used_at && row.last_used_at.getTime() > staleBefore) return;
    await queryPool(
      this.dataSource,
      `UPDATE ${table} SET last_used_at = now()
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2))`,
      [row.token_id, LAST_USED_PRECISION_SECONDS],
    );
  }
}
