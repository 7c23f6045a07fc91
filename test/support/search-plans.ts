/** What one scan of the passages (or of their indexes) in an `EXPLAIN ANALYZE` brought back and threw away. */
export interface PassageScan {
  rows: number;
  removed: number;
}

/** Every scan of the passages in a plan's lines; none for a node never run. */
export function passagesRead(lines: string[]): PassageScan[] {
  const scans: PassageScan[] = [];
  let current: PassageScan | undefined;
  for (const line of lines) {
    if (/^\s*(->|\S)/.test(line) && /\(actual|never executed/.test(line)) {
      current = / on passages(_\w+)? /.test(line)
        ? { rows: Number(/rows=(\d+)/.exec(line)?.[1] ?? 0), removed: 0 }
        : undefined;
      if (current) scans.push(current);
    } else if (current) {
      current.removed += Number(/Rows Removed by (?:Filter|Index Recheck): (\d+)/.exec(line)?.[1] ?? 0);
    }
  }
  return scans;
}
