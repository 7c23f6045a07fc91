import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DEFAULT_SERVER_TIMEOUT_MS } from '@app/contracts';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** An account's settings: today its default ring-time hook. */
export interface UserSettingsRow {
  server_url: string | null;
  server_timeout_ms: number;
  server_secret_sealed: string | null;
}

/** What a save changes: a field left out stays as it is. */
export interface UserSettingsChanges {
  serverUrl?: string | null;
  serverTimeoutMs?: number;
  /** Kept only when the account has no secret yet: the first `server_url` makes it, later ones keep it. */
  firstSecretSealed?: string;
  /** Replaces the secret outright (a rotation). */
  secretSealed?: string;
}

const COLUMNS = 'server_url, server_timeout_ms, server_secret_sealed';

/** `user_settings`, one row an account, made by its first save; an account without one has the defaults. */
@Injectable()
export class UserSettingsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** The account's settings, or undefined when it never saved any. */
  async find(userId: number): Promise<UserSettingsRow | undefined> {
    const [row] = await this.reads.query<UserSettingsRow>(
      userId,
      `SELECT ${COLUMNS} FROM user_settings WHERE user_id = $1`,
      [userId],
    );
    return row;
  }

  /** Applies the changes in one statement, making the account's row on its first save; answers the row as saved. */
  async save(userId: number, changes: UserSettingsChanges): Promise<UserSettingsRow> {
    const given = (value: unknown) => (value === undefined ? null : value);
    const [row] = (await this.manager.query(
      `INSERT INTO user_settings AS settings (user_id, server_url, server_timeout_ms, server_secret_sealed)
            VALUES ($1, $3, COALESCE($4::int, $7), COALESCE($6, $5))
       ON CONFLICT (user_id) DO UPDATE SET
            server_url = CASE WHEN $2 THEN EXCLUDED.server_url ELSE settings.server_url END,
            server_timeout_ms = COALESCE($4::int, settings.server_timeout_ms),
            server_secret_sealed = COALESCE($6, settings.server_secret_sealed, $5),
            updated_at = now()
       RETURNING ${COLUMNS}`,
      [
        userId,
        changes.serverUrl !== undefined,
        given(changes.serverUrl),
        given(changes.serverTimeoutMs),
        given(changes.firstSecretSealed),
        given(changes.secretSealed),
        DEFAULT_SERVER_TIMEOUT_MS,
      ],
    )) as UserSettingsRow[];
    return row;
  }
}
