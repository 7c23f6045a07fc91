import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** The tokens of one answer of the model provider. */
export interface ModelTokens {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** One account's use of the model provider on one UTC day, for one purpose. */
export interface ModelUsageDay extends ModelTokens {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  purpose: string;
  requests: number;
}

interface ModelUsageRow {
  day: string;
  purpose: string;
  requests: number;
  prompt_tokens: string;
  completion_tokens: string;
  total_tokens: string;
}

/**
 * `model_usage_daily`: what the model provider spent for each account, a row per UTC day and purpose, added to by
 * each of its answers (one upsert, so answers arriving at once in several processes all count).
 */
@Injectable()
export class ModelUsageRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** Adds one answer's tokens to the account's row of today (UTC) for the purpose. */
  async add(ownerId: number, purpose: string, tokens: ModelTokens): Promise<void> {
    await this.manager.query(
      `INSERT INTO model_usage_daily AS usage
              (user_id, day, purpose, requests, prompt_tokens, completion_tokens, total_tokens)
       VALUES ($1, (now() AT TIME ZONE 'UTC')::date, $2, 1, $3, $4, $5)
       ON CONFLICT (user_id, day, purpose) DO UPDATE
          SET requests = usage.requests + 1,
              prompt_tokens = usage.prompt_tokens + EXCLUDED.prompt_tokens,
              completion_tokens = usage.completion_tokens + EXCLUDED.completion_tokens,
              total_tokens = usage.total_tokens + EXCLUDED.total_tokens`,
      [ownerId, purpose, tokens.promptTokens, tokens.completionTokens, tokens.totalTokens],
    );
  }

  /** The account's days from `from` to `to` (inclusive, `YYYY-MM-DD`), oldest first. */
  async days(ownerId: number, from: string, to: string): Promise<ModelUsageDay[]> {
    const rows = (await this.manager.query(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, purpose, requests, prompt_tokens, completion_tokens, total_tokens
         FROM model_usage_daily
        WHERE user_id = $1 AND day BETWEEN $2 AND $3
        ORDER BY day, purpose`,
      [ownerId, from, to],
    )) as ModelUsageRow[];
    return rows.map((row) => ({
      day: row.day,
      purpose: row.purpose,
      requests: row.requests,
      promptTokens: Number(row.prompt_tokens),
      completionTokens: Number(row.completion_tokens),
      totalTokens: Number(row.total_tokens),
    }));
  }
}
