/** What a search query asks for, as people type it into a web search box. */
export interface ParsedSearchQuery {
  /** Words any of which may match; they rank a passage. */
  words: string[];
  /** Quoted phrases every result must contain (their words also rank). */
  phrases: string[];
  /** Words and phrases after a minus sign; no result contains any of them. */
  excluded: string[];
}

const TOKEN = /(-?)"([^"]*)"?|(\S+)/g;

/**
 * `opening hours "friday" -closed -"bank holiday"`: quotes make a required phrase, a leading minus excludes,
 * `OR` is accepted and changes nothing (any word already matches). Never fails: what cannot be read is a word.
 */
export function parseSearchQuery(query: string): ParsedSearchQuery {
  const parsed: ParsedSearchQuery = { words: [], phrases: [], excluded: [] };
  for (const [, minus, quoted, bare] of query.matchAll(TOKEN)) {
    if (quoted !== undefined) {
      const phrase = quoted.trim();
      if (!phrase) continue;
      if (minus) parsed.excluded.push(phrase);
      else parsed.phrases.push(phrase);
      continue;
    }
    if (bare === 'OR') continue;
    if (bare.length > 1 && bare.startsWith('-')) parsed.excluded.push(bare.slice(1));
    else parsed.words.push(bare);
  }
  parsed.words.push(...parsed.phrases);
  return parsed;
}
