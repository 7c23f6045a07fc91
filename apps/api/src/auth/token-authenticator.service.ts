import { Injectable } from '@nestjs/common';
import { type CredentialKind, type CredentialRow, CredentialsRepository } from '@app/database';
import { hashToken, parseToken } from '@app/platform';
import type { AuthContext } from './auth-context';

/** How stale `last_used_at` may get before a request refreshes it; avoids a write on every request. */
const LAST_USED_PRECISION_SECONDS = 60;

/**
 * Resolves a bearer token to its user. Malformed tokens (wrong prefix, length or checksum) are refused without
 * a query; valid-looking ones are looked up by hash on every request, so a deleted key or ended session is
 * refused at once.
 */
@Injectable()
export class TokenAuthenticator {
  constructor(private readonly credentials: CredentialsRepository) {}

  async authenticate(token: string): Promise<AuthContext | null> {
    const kind = parseToken(token);
    // A call token opens only its call's runtime routes, never the user API.
    if (!kind || kind === 'call') return null;
    const row = await this.credentials.find(kind, hashToken(token));
    if (!row) return null;
    await this.touch(kind, row);
    return {
      user: { id: row.user_id, name: row.user_name, email: row.user_email },
      tokenKind: kind,
      tokenId: row.token_id,
    };
  }

  private async touch(kind: CredentialKind, row: CredentialRow): Promise<void> {
    const staleBefore = Date.now() - LAST_USED_PRECISION_SECONDS * 1000;
    if (row.last_used_at && row.last_used_at.getTime() > staleBefore) return;
    await this.credentials.touch(kind, row.token_id, LAST_USED_PRECISION_SECONDS);
  }
}
