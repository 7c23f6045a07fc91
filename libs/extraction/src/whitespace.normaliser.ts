/** No-break and typographic spaces (U+00A0, U+1680, U+2000-U+200A, U+202F, U+205F, U+3000). */
const UNICODE_SPACES = /[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/g;
/** Invisible characters that only get in the way of search: zero-width space and stray byte-order marks. */
const INVISIBLE_CHARACTERS = /[\u200b\ufeff]/g;
/** C0 and C1 control characters except tab and newline. */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
/** A soft hyphen marks where a word may be split; at a line end it means the word continues on the next line. */
const SOFT_HYPHEN_AT_LINE_END = /\u00ad\n/g;
const SOFT_HYPHEN = /\u00ad/g;
const HYPHENATED_LINE_BREAK = /(\p{Ll})-\n(\p{Ll})/gu;

/**
 * Cleans extracted text for indexing: one kind of newline, plain spaces, no control characters, no
 * trailing or repeated blanks, paragraphs separated by exactly one blank line, and words that were
 * hyphenated at a line break joined again.
 */
export function normaliseWhitespace(text: string): string {
  // Form feeds (page breaks) and paragraph separators end a paragraph; the rest are line breaks.
  const withPlainNewlines = text.replace(/[\u000c\u2029]/g, '\n\n').replace(/\r\n?|[\u2028\u000b]/g, '\n');
  const withPlainCharacters = withPlainNewlines
    .replace(SOFT_HYPHEN_AT_LINE_END, '')
    .replace(SOFT_HYPHEN, '')
    .replace(UNICODE_SPACES, ' ')
    .replace(INVISIBLE_CHARACTERS, '')
    .replace(CONTROL_CHARACTERS, '');
  const trimmedLines = withPlainCharacters
    .split('\n')
    .map((line) => line.replace(/[ \t]+/g, ' ').trim())
    .join('\n');
  return trimmedLines
    .replace(HYPHENATED_LINE_BREAK, '$1$2')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
