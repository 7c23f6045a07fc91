import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Rule } from '../validation';

/** The most days one usage request covers (a year, a leap day included). */
export const MAX_USAGE_DAYS = 366;
/** The days a request that names no `date_from` covers, up to its `date_to`. */
export const DEFAULT_USAGE_DAYS = 30;

export class UsageQuery {
  @ApiPropertyOptional({
    type: String,
    format: 'date',
    description: `The first day (UTC); default: ${DEFAULT_USAGE_DAYS} days up to \`date_to\``,
  })
  @Rule.Optional()
  @Rule.DateYmd()
  date_from?: string;

  @ApiPropertyOptional({
    type: String,
    format: 'date',
    description: `The last day (UTC), at most ${MAX_USAGE_DAYS} days after \`date_from\`; default: today`,
  })
  @Rule.Optional()
  @Rule.DateYmd()
  date_to?: string;
}

export class UsageDay {
  @ApiProperty({ type: String, format: 'date', example: '2026-01-02', description: 'A UTC day' }) date: string;
  @ApiProperty({ type: 'integer', description: 'Calls created that day' }) calls: number;
  @ApiProperty({ type: Number, example: 12.5, description: 'Their durations, in minutes (two decimals)' })
  minutes: number;
  @ApiProperty({ type: 'integer', description: 'Tokens the model provider spent on post-call analysis' })
  llm_tokens: number;
  @ApiProperty({ type: 'integer', description: 'Tokens it spent on embeddings (documents and searches)' })
  embedding_tokens: number;
}

export class UsageEnvelope {
  @ApiProperty({ type: [UsageDay], description: 'Every day of the range, oldest first, days without use as zeros' })
  data: UsageDay[];
}

/** One UTC day of an account's usage, as libs/database's `UsageRepository` reads it. */
export interface UsageDayRow {
  /** `YYYY-MM-DD`. */
  date: string;
  calls: number;
  seconds: number;
  llmTokens: number;
  embeddingTokens: number;
}

export function toUsageDay(day: UsageDayRow): UsageDay {
  return {
    date: day.date,
    calls: day.calls,
    minutes: Math.round((day.seconds / 60) * 100) / 100,
    llm_tokens: day.llmTokens,
    embedding_tokens: day.embeddingTokens,
  };
}
