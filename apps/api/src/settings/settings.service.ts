import { Injectable } from '@nestjs/common';
import {
  DEFAULT_SERVER_TIMEOUT_MS,
  SettingsEnvelope,
  SettingsMessageEnvelope,
  type SettingsResponse,
  toServerHookResponse,
  UpdateSettingsRequest,
} from '@app/contracts';
import { newWebhookSecret, SecretBox, SecretContexts } from '@app/crypto';
import { type UserSettingsRow, UserSettingsRepository } from '@app/database';
import type { AuthenticatedUser } from '../auth/auth-context';

/** The account's settings: its default ring-time hook, for its numbers that name none of their own. */
@Injectable()
export class SettingsService {
  constructor(
    private readonly settings: UserSettingsRepository,
    private readonly secrets: SecretBox,
  ) {}

  async get(user: AuthenticatedUser): Promise<SettingsEnvelope> {
    return { data: this.response(user, await this.settings.find(user.id)) };
  }

  /**
   * A field left out stays; a null `server_url` clears the default. The signing secret is made when a URL is first
   * set, and kept (rotated only on request).
   */
  async update(user: AuthenticatedUser, request: UpdateSettingsRequest): Promise<SettingsMessageEnvelope> {
    const saved = await this.settings.save(user.id, {
      serverUrl: request.server_url,
      serverTimeoutMs: request.server_timeout_ms,
      firstSecretSealed: request.server_url ? this.sealedNewSecret(user) : undefined,
    });
    return { message: 'Settings updated successfully.', data: this.response(user, saved) };
  }

  /** A new signing secret for the account's hook; the old one signs nothing from now on. */
  async rotateServerSecret(user: AuthenticatedUser): Promise<SettingsMessageEnvelope> {
    const saved = await this.settings.save(user.id, { secretSealed: this.sealedNewSecret(user) });
    return { message: 'Server secret rotated successfully.', data: this.response(user, saved) };
  }

  private sealedNewSecret(user: AuthenticatedUser): string {
    return this.secrets.seal(newWebhookSecret(), SecretContexts.accountServerSecret(user.id));
  }

  private response(user: AuthenticatedUser, row: UserSettingsRow | undefined): SettingsResponse {
    return toServerHookResponse({
      serverUrl: row?.server_url ?? null,
      serverTimeoutMs: row?.server_timeout_ms ?? DEFAULT_SERVER_TIMEOUT_MS,
      serverSecret: row?.server_secret_sealed
        ? this.secrets.open(row.server_secret_sealed, SecretContexts.accountServerSecret(user.id))
        : null,
    });
  }
}
