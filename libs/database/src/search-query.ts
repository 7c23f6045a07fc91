/** What a search query asks for, as people type it into a web search box. */
export interface ParsedSearchQuery {
  /** Words any of which may match; they rank a passage. */
  words: string[];
  /** Quoted phrases every result must contain (their words also rank). */
  phrases: string[];
  /** Words and phrases after a minus sign; no result contains any of them. */
  excluded: string[];
  /**
   * The bare words that may also match related words (synonyms, derivations): common words as typed in lower
   * case, or capitalised at the start, and HTTP status codes (503 for 5xx). A name, another number, a code or a
   * quoted phrase is meant exactly.
   */
  expandable: string[];
  /**
   * Runs of two and three such words in a row, lower-cased, for the phrasal verbs among the related words
   * ("call off", "get rid of"); punctuation, a quoted phrase or any other word ends a run.
   */
  runs: string[];
}

const PUNCTUATION = /^\p{P}+|\p{P}+$/gu;
const LOWER_CASE_WORD = /^\p{Ll}+$/u;
const CAPITALISED_WORD = /^\p{Lu}\p{Ll}+$/u;

/** An HTTP status code, which also matches its class (503: 5xx). */
const STATUS_CODE = /^[1-5]\d\d$/;

const TOKEN = /(-?)"([^"]*)"?|(\S+)/g;

/**
 * `opening hours "friday" -closed -"bank holiday"`: quotes make a required phrase, a leading minus excludes,
 * `OR` is accepted and changes nothing (any word already matches). Never fails: what cannot be read is a word.
 */
export function parseSearchQuery(query: string): ParsedSearchQuery {
  const parsed: ParsedSearchQuery = { words: [], phrases: [], excluded: [], expandable: [], runs: [] };
  let run: string[] = [];
  for (const [, minus, quoted, bare] of query.matchAll(TOKEN)) {
    const before = run;
    run = [];
    if (quoted !== undefined) {
      const phrase = quoted.trim();
      if (!phrase) continue;
      if (minus) parsed.excluded.push(phrase);
      else parsed.phrases.push(phrase);
      continue;
    }
    if (bare === 'OR') continue;
    if (bare.length > 1 && bare.startsWith('-')) {
      parsed.excluded.push(bare.slice(1));
      continue;
    }
    const word = bare.replace(PUNCTUATION, '');
    if (STATUS_CODE.test(word)) parsed.expandable.push(word);
    else if (LOWER_CASE_WORD.test(word) || (parsed.words.length === 0 && CAPITALISED_WORD.test(word))) {
      parsed.expandable.push(word);
      // A word with punctuation before it starts no run with the words before; with punctuation after, none after.
      const joined = bare.startsWith(word) ? [...before, word.toLowerCase()] : [word.toLowerCase()];
      for (const length of [2, 3]) {
        if (joined.length >= length) parsed.runs.push(joined.slice(-length).join(' '));
      }
      if (bare.endsWith(word)) run = joined;
    }
    parsed.words.push(bare);
  }
  parsed.words.push(...parsed.phrases);
  return parsed;
}
