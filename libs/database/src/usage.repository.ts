import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { UsageDayRow } from '@app/contracts';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** The model provider's purposes (`ModelUsePurpose` of libs/model-provider) that are embeddings; `analysis` is the rest. */
const EMBEDDING_PURPOSES = ['document_embeddings', 'search_embeddings'];

/**
 * An account's usage per UTC day, from the daily counters kept as it is used (`call_usage_daily`, kept by the calls'
 * triggers; `model_usage_daily`, by the model provider's answers): never a scan of its calls, so a year reads at most
 * a few thousand counter rows whatever the account's size.
 */
@Injectable()
export class UsageRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** Every day from `from` to `to` (inclusive, `YYYY-MM-DD`), oldest first, days without use as zeros. */
  async days(ownerId: number, from: string, to: string): Promise<UsageDayRow[]> {
    const rows = await this.reads.query<{
      date: string;
      calls: string;
      seconds: string;
      llm_tokens: string;
      embedding_tokens: string;
    }>(
      ownerId,
      `WITH calls AS (
         SELECT day, sum(calls) AS calls, sum(seconds) AS seconds FROM call_usage_daily
          WHERE user_id = $1 AND day BETWEEN $2::date AND $3::date GROUP BY day
       ), tokens AS (
         SELECT day, sum(total_tokens) FILTER (WHERE purpose = 'analysis') AS llm_tokens,
                sum(total_tokens) FILTER (WHERE purpose = ANY($4)) AS embedding_tokens
           FROM model_usage_daily WHERE user_id = $1 AND day BETWEEN $2::date AND $3::date GROUP BY day
       )
       SELECT to_char(days.day, 'YYYY-MM-DD') AS date, COALESCE(calls.calls, 0) AS calls,
              COALESCE(calls.seconds, 0) AS seconds, COALESCE(tokens.llm_tokens, 0) AS llm_tokens,
              COALESCE(tokens.embedding_tokens, 0) AS embedding_tokens
         FROM generate_series($2::date, $3::date, interval '1 day') AS days(day)
         LEFT JOIN calls ON calls.day = days.day::date
         LEFT JOIN tokens ON tokens.day = days.day::date
        ORDER BY days.day`,
      [ownerId, from, to, EMBEDDING_PURPOSES],
    );
    return rows.map((row) => ({
      date: row.date,
      calls: Number(row.calls),
      seconds: Number(row.seconds),
      llmTokens: Number(row.llm_tokens),
      embeddingTokens: Number(row.embedding_tokens),
    }));
  }
}
