/**
 * The WHERE clause of a filtered list, built with numbered parameters so values never enter the SQL text.
 * `where(...)` adds a condition whose placeholder it fills; `next()` is the placeholder after the last one.
 */
export class SqlFilter {
  readonly values: unknown[] = [];
  private readonly conditions: string[] = [];

  constructor(condition: (placeholder: string) => string, value: unknown) {
    this.where(condition, value);
  }

  where(condition: (placeholder: string) => string, value: unknown): this {
    this.values.push(value);
    this.conditions.push(condition(`$${this.values.length}`));
    return this;
  }

  /**
   * Numbers in `column` containing `part` (`LIKE '%part%'`), of the account the filter's first parameter names
   * (`owner` its column). Every three characters in a row of the part are three of a matching number: the account's
   * index of its numbers' character triples (`account_number_trigrams`) finds the candidates among its own rows
   * only, and LIKE rechecks them, so what matches is exactly the substring match.
   */
  numberContaining(column: string, owner: string, part: string): this {
    this.where((p) => `${column} LIKE ${p}`, `%${part}%`);
    if (part.length < 3) return this;
    return this.where(
      (p) => `account_number_trigrams(${owner}, ${column}) @> account_number_trigrams($1::int, ${p}::text)`,
      part,
    );
  }

  get sql(): string {
    return this.conditions.join(' AND ');
  }

  /** The placeholder `offset` places after the filter's own, for LIMIT and OFFSET. */
  next(offset = 1): string {
    return `$${this.values.length + offset}`;
  }
}
