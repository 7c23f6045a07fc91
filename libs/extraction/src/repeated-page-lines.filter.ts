/** How many non-blank lines at the top and at the bottom of a page may be a running header or footer. */
const EDGE_LINE_COUNT = 3;
const MINIMUM_PAGE_COUNT = 3;

/**
 * Drops running headers and footers ("ACME Corp Confidential", "Page 3 of 9"). Lines are compared with
 * digits ignored; one that sits among the first or last few lines of more than half of the pages is
 * removed from the top and bottom of every page. Lines in the middle of a page are left alone.
 */
export function removeRepeatedPageLines(pages: string[]): string[] {
  return pages.map(repeatedPageLinesRemover(pages));
}

/**
 * What removeRepeatedPageLines does to each page, decided from all of them; applied to one page at a time, so a
 * large document's cleaned pages can replace its pages one by one instead of being held beside them.
 */
export function repeatedPageLinesRemover(pages: readonly string[]): (page: string) => string {
  if (pages.length < MINIMUM_PAGE_COUNT) return (page) => page;
  const repeatedKeys = findRepeatedEdgeKeys(pages);
  if (repeatedKeys.size === 0) return (page) => page;
  return (page) => removeEdgeLines(splitLines(page), repeatedKeys).join('\n');
}

function findRepeatedEdgeKeys(pages: readonly string[]): Set<string> {
  // For each key, the first matching edge line of every page it occurs on, in page order.
  const occurrencesByKey = new Map<string, string[]>();
  for (const page of pages) {
    const lines = splitLines(page);
    const keysOnPage = new Set<string>();
    for (const index of edgeLineIndexes(lines)) {
      const key = lineKey(lines[index]);
      if (keysOnPage.has(key)) continue;
      keysOnPage.add(key);
      const occurrences = occurrencesByKey.get(key);
      if (occurrences) occurrences.push(lines[index].trim());
      else occurrencesByKey.set(key, [lines[index].trim()]);
    }
  }
  const repeated = new Set<string>();
  for (const [key, occurrences] of occurrencesByKey) {
    if (occurrences.length > pages.length / 2 && isRunningHeaderOrFooter(occurrences)) repeated.add(key);
  }
  return repeated;
}

/**
 * Identical lines are running headers. Lines that differ only in their numbers must count pages (one of the
 * numbers grows from page to page); otherwise they are more likely content, such as similar table rows on
 * short pages, where the top and bottom lines cover the whole page.
 */
function isRunningHeaderOrFooter(occurrences: string[]): boolean {
  if (occurrences.every((line) => line === occurrences[0])) return true;
  const numbersPerPage = occurrences.map((line) => (line.match(/\d+/g) ?? []).map(Number));
  return numbersPerPage[0].some((_, position) =>
    numbersPerPage.every((numbers, page) => page === 0 || numbers[position] > numbersPerPage[page - 1][position]),
  );
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
