/** How many non-blank lines at the top and at the bottom of a page may be a running header or footer. */
const EDGE_LINE_COUNT = 3;
const MINIMUM_PAGE_COUNT = 3;

/**
 * Drops running headers and footers ("ACME Corp Confidential", "Page 3 of 9"): a line that sits near the
 * top or bottom of more than half of the pages is removed from the top and bottom of every page. Lines in
 * the middle of a page are left alone, so body text that happens to match is kept.
 */
export function removeRepeatedPageLines(pages: string[]): string[] {
  if (pages.length < MINIMUM_PAGE_COUNT) return pages;
  const repeatedKeys = findRepeatedEdgeKeys(pages.map(splitLines));
  if (repeatedKeys.size === 0) return pages;
  return pages.map((page) => removeEdgeLines(splitLines(page), repeatedKeys).join('\n'));
}

function findRepeatedEdgeKeys(pagesLines: string[][]): Set<string> {
  const pageCountByKey = new Map<string, number>();
  for (const lines of pagesLines) {
    const keysOnPage = new Set(edgeLineIndexes(lines).map((index) => lineKey(lines[index])));
    for (const key of keysOnPage) pageCountByKey.set(key, (pageCountByKey.get(key) ?? 0) + 1);
  }
  const repeated = new Set<string>();
  for (const [key, count] of pageCountByKey) {
    if (count > pagesLines.length / 2) repeated.add(key);
  }
  return repeated;
}

function removeEdgeLines(lines: string[], repeatedKeys: Set<string>): string[] {
  const doomed = new Set(edgeLineIndexes(lines).filter((index) => repeatedKeys.has(lineKey(lines[index]))));
  return lines.filter((_, index) => !doomed.has(index));
}

/** Indexes of the first and last few non-blank lines. */
function edgeLineIndexes(lines: string[]): number[] {
  const nonBlank = lines.flatMap((line, index) => (line.trim() === '' ? [] : [index]));
  return [...new Set([...nonBlank.slice(0, EDGE_LINE_COUNT), ...nonBlank.slice(-EDGE_LINE_COUNT)])];
}

/** Page numbers change from page to page, so digits are ignored when comparing lines. */
function lineKey(line: string): string {
  return line.trim().replace(/\s+/g, ' ').replace(/\d+/g, '#');
}

function splitLines(page: string): string[] {
  return page.split(/\r?\n/);
}
