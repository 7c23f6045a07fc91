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

  get sql(): string {
    return this.conditions.join(' AND ');
  }

  /** The placeholder `offset` places after the filter's own, for LIMIT and OFFSET. */
  next(offset = 1): string {
    return `$${this.values.length + offset}`;
  }
}
