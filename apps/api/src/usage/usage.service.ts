import { Injectable } from '@nestjs/common';
import {
  DEFAULT_USAGE_DAYS,
  MAX_USAGE_DAYS,
  toUsageDay,
  UsageEnvelope,
  UsageQuery,
  ValidationFailed,
} from '@app/contracts';
import { UsageRepository } from '@app/database';
import type { AuthenticatedUser } from '../auth/auth-context';

const DAY_MS = 86_400_000;
const dayOf = (date: Date) => date.toISOString().slice(0, 10);
const addDays = (day: string, days: number) => dayOf(new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS));

@Injectable()
export class UsageService {
  constructor(private readonly usage: UsageRepository) {}

  /**
   * Every day of the range, from the daily counters: up to today (UTC) by default, from DEFAULT_USAGE_DAYS days
   * before its end unless `date_from` says; at most MAX_USAGE_DAYS days, in order (else 422 on the field sent last).
   */
  async days(user: AuthenticatedUser, query: UsageQuery): Promise<UsageEnvelope> {
    const to = query.date_to ?? dayOf(new Date());
    const from = query.date_from ?? addDays(to, 1 - DEFAULT_USAGE_DAYS);
    if (to < from) {
      throw query.date_to
        ? ValidationFailed.field('date_to', `The date to field must be a date after or equal to ${from}.`)
        : ValidationFailed.field('date_from', `The date from field must be a date before or equal to ${to}.`);
    }
    if (to > addDays(from, MAX_USAGE_DAYS - 1)) {
      throw query.date_to
        ? ValidationFailed.field(
            'date_to',
            `The date to field must be a date before or equal to ${addDays(from, MAX_USAGE_DAYS - 1)}.`,
          )
        : ValidationFailed.field(
            'date_from',
            `The date from field must be a date after or equal to ${addDays(to, 1 - MAX_USAGE_DAYS)}.`,
          );
    }
    const days = await this.usage.days(user.id, from, to);
    return { data: days.map(toUsageDay) };
  }
}
