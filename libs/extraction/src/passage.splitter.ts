export interface PassageOptions {
  /** Roughly how long a passage should be, in characters. */
  targetLength?: number;
  /** How much of the previous passage to repeat at the start of the next one, in characters. */
  overlap?: number;
}

/** A piece of text that is never split further when packing, and what joined it to the piece before it. */
interface TextPiece {
  text: string;
  separator: string;
  /** A section heading, kept with the piece after it and repeated at the start of the section's later passages. */
  heading?: boolean;
}

/**
 * How passages are cut, stored with each document's passages: a document cut by an earlier version is re-cut in
 * the background. 1: paragraphs packed, any overlap at a word start, decoration kept. 2: sentences never split
 * (unless longer than a passage), the overlap whole sentences, section headings kept as context, decoration dropped.
 * 3: a sentence cut by a page break (or a stray blank line) joined again; a numbered or lettered clause on a line of
 * its own kept whole where it fits.
 */
export const PASSAGE_CUT_VERSION = 3;

const DEFAULT_TARGET_LENGTH = 1000;
const DEFAULT_OVERLAP = 150;
const PARAGRAPH_BREAK = /\n\s*\n/;
/**
 * After . ! ? (and closing quotes or brackets) followed by whitespace and no lower-case letter, unless the full stop
 * ends an abbreviation (e.g., No.), an initial or a list number (also after an opening quote or bracket: "J. Smith"); or
 * after CJK full stops, which need no space.
 */
const SENTENCE_GAP =
  /(?<=[.!?]["'”’)\]]*)(?<!\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|No|Nr|Mr|Mrs|Ms|Dr|St|Art|Sec)\.)(?<!(?:^|[\s"'“‘([])(?:\d{1,3}|[ivxIVX]{1,4}|\p{L})\.)\s+(?!\p{Ll})|(?<=[\u3002\uff01\uff1f])(?![\u3002\uff01\uff1f])\s*/gu;
const WORD_GAP = /\s+/g;
/** A line of rule characters only: a rule of dashes or equals signs, the top of a box of asterisks, a table's ruling. */
const RULE_LINE = /^[\s*=\-_~#+|:.\u2022\u00b7]+$/u;
/** A line inside a box of asterisks: its text between the borders. */
const BOXED_LINE = /^\*+\s+(.*?)\s+\*+$/;
/** A section heading: one short line, numbered ("15. Disclaimer of Warranty") or capitalised, ending in no punctuation. */
const HEADING = /^(?:#{1,6}\s+\S.*|(?:\d+(?:\.\d+)*\.?\s+|[IVX]+\.\s+)?[\p{Lu}\p{N}][^\n]*)$/u;
const HEADING_MAX_LENGTH = 80;
/** The end of a sentence, or of a clause before a list: what a paragraph cut by a page break does not end with. */
const SENTENCE_END = /[.!?:;\u3002\uff01\uff1f]["'\u201d\u2019)\]]*$/u;
/** What the rest of a sentence cut by a page break starts with. */
const CONTINUATION = /^\p{Ll}/u;
/**
 * A line break, after a line that ends a sentence or introduces a list, before a numbered or lettered clause ("1. You
 * may copy", "2.1 Grants", "a) You must", "(iii) any") or a bullet: where a PDF, whose paragraphs are only lines,
 * starts a clause.
 */
const CLAUSE_GAP =
  /(?<=[.:;]["'\u201d\u2019)\]]*)\n(?=(?:\d{1,3}(?:\.\d{1,3})*[.)]|\d{1,3}(?:\.\d{1,3})+|\(?[a-z]\)|\(?[ivx]{1,4}\)|[-\u2022*\u2013])[ \t]+\S)/gu;

/**
 * Packs whole paragraphs greedily into passages of about `targetLength` characters, so a search hit comes
 * with enough context and can be read out as it stands. Oversized paragraphs are split into sentences; only a
 * sentence longer than a passage is split into words, and a word longer than one (such as a CJK run without spaces)
 * is cut. Each passage after the first repeats the last whole sentences of the previous one (at most `overlap`
 * characters), so text near a boundary is still found together with its neighbours. Decoration is dropped (rules of
 * dashes or equals signs, the borders of boxes of asterisks), and a passage that starts inside a section begins with
 * the section's heading, so a question about the section finds its every part.
 */
export function splitIntoPassages(text: string, options: PassageOptions = {}): string[] {
  const splitter = new PassageSplitter(options);
  return [...splitter.add(text), ...splitter.finish()];
}

/**
 * splitIntoPassages for a text that arrives in parts (a PDF's pages), so the whole text never has to exist at once.
 * Each part must end where a paragraph ends: the passages are exactly those of the parts joined by blank lines, and
 * each is handed out as soon as it is complete.
 */
export class PassageSplitter {
  private readonly targetLength: number;
  private readonly overlap: number;
  /** The passage being packed: the heading of the section it started in (when repeated), then its text. */
  private prefix = '';
  private current = '';
  /** The heading of the section being read, repeated at the start of its later passages. */
  private heading = '';
  /** The number of the section the heading opened ("15" of "15. Disclaimer of Warranty"), if it has one. */
  private headingNumber: string | undefined;
  /** Headings read and not yet followed by any text: they go with the next piece. */
  private pendingHeadings: string[] = [];
  /** The last piece of the previous part, when it ends mid-sentence: the next part may carry on its sentence. */
  private carried: TextPiece | undefined;

  constructor(options: PassageOptions = {}) {
    this.targetLength = options.targetLength ?? DEFAULT_TARGET_LENGTH;
    this.overlap = options.overlap ?? DEFAULT_OVERLAP;
    if (!Number.isInteger(this.targetLength) || this.targetLength < 1)
      throw new RangeError('targetLength must be a positive integer');
    if (!Number.isInteger(this.overlap) || this.overlap < 0 || this.overlap >= this.targetLength) {
      throw new RangeError('overlap must be a non-negative integer smaller than targetLength');
    }
  }

  /** Adds the next part of the text; returns the passages it completed. */
  add(text: string): string[] {
    const pieces = joinCutSentences(
      [...(this.carried ? [this.carried] : []), ...splitIntoPieces(text, this.targetLength)],
      this.targetLength,
    );
    this.carried = pieces.length > 0 && mayContinue(pieces[pieces.length - 1]) ? pieces.pop() : undefined;
    return this.pack(pieces);
  }

  /** The last passage, once the text has ended. */
  finish(): string[] {
    const carried = this.carried ? this.pack([this.carried]) : [];
    const trailing = this.pendingHeadings.join('\n\n');
    const last = [this.prefix + this.current, trailing].filter((part) => part !== '').join('\n\n');
    this.prefix = '';
    this.current = '';
    this.heading = '';
    this.headingNumber = undefined;
    this.pendingHeadings = [];
    this.carried = undefined;
    return last === '' ? carried : [...carried, last];
  }

  private pack(pieces: TextPiece[]): string[] {
    const passages: string[] = [];
    for (const piece of pieces) {
      if (piece.heading) {
        this.pendingHeadings.push(piece.text);
        this.heading = piece.text;
        this.headingNumber = sectionNumber(piece.text);
        continue;
      }
      let { text: pieceText, separator } = piece;
      const opensSection = this.pendingHeadings.length > 0;
      // A numbered paragraph outside the heading's number starts a section of its own ("3. You may copy ..." after
      // "Preamble"): the heading no longer says where it stands. One right under an unnumbered heading ("NO
      // WARRANTY", "11. BECAUSE ...") gives the heading its number.
      const number = separator === '\n\n' ? sectionNumber(pieceText) : undefined;
      if (number !== undefined && opensSection && this.headingNumber === undefined) this.headingNumber = number;
      else if (number !== undefined && number !== this.headingNumber) this.heading = '';
      if (opensSection) {
        pieceText = `${this.pendingHeadings.join('\n\n')}\n\n${pieceText}`;
        separator = '\n\n';
        this.pendingHeadings = [];
      }
      const length = this.prefix.length + this.current.length + separator.length + pieceText.length;
      if (this.current === '') {
        this.current = pieceText;
      } else if (length <= this.targetLength) {
        this.current += separator + pieceText;
      } else {
        passages.push(this.prefix + this.current);
        // A new section starts afresh; a passage inside one repeats its heading and the previous one's last sentences.
        const tail = opensSection ? '' : overlapTail(this.current, this.overlap);
        this.prefix = opensSection || this.heading === '' ? '' : `${this.heading}\n\n`;
        this.current = tail === '' ? pieceText : tail + separator + pieceText;
      }
    }
    return passages;
  }
}

/**
 * The text of a document's passages as an earlier cut wrote them, each one's repeat of the previous one's end
 * removed (at most `overlap` characters, followed by what separated the two pieces), and the section's heading that
 * a passage inside a section starts with (cut version 2 on), for cutting again.
 */
export function rejoinPassages(passages: readonly string[], overlap = DEFAULT_OVERLAP): string {
  let text = passages[0] ?? '';
  let heading = lastHeading(text);
  for (let index = 1; index < passages.length; index += 1) {
    const previous = passages[index - 1];
    const headingPrefix = heading === undefined ? undefined : `${heading}\n\n`;
    const passage =
      headingPrefix && passages[index].startsWith(headingPrefix)
        ? passages[index].slice(headingPrefix.length)
        : passages[index];
    let repeated = 0;
    let unbounded = 0;
    for (let length = Math.min(overlap, previous.length, passage.length); length > 0; length -= 1) {
      if (!previous.endsWith(passage.slice(0, length))) continue;
      // Punctuation alone is no repeat: a table's row ends and the next starts with "|".
      if (!/[\p{L}\p{N}]/u.test(passage.slice(0, length))) break;
      if (length === passage.length || /\s/.test(passage[length])) {
        repeated = length;
        break;
      }
      // A cut without a space (CJK text) repeats the end with nothing between.
      if (unbounded === 0) unbounded = length;
    }
    if (repeated === 0) repeated = unbounded >= 10 ? unbounded : 0;
    const rest = passage.slice(repeated);
    text += repeated === 0 ? `\n\n${rest}` : rest;
    heading = lastHeading(rest) ?? heading;
  }
  return text;
}

/** The last paragraph of `text` that is a section heading, if any. */
function lastHeading(text: string): string | undefined {
  return paragraphsOf(text).filter(isHeading).at(-1);
}

/** The text without decoration: rule lines become paragraph breaks, boxed lines lose their borders. */
export function removeDecoration(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      const trimmed = line.trim();
      // A box's empty row ("*   *", or "* *" once runs of spaces are one) is a rule too.
      if (/^\*\s*\*$/.test(trimmed)) return '';
      const text = BOXED_LINE.exec(trimmed)?.[1] ?? trimmed;
      return RULE_LINE.test(text) && text.replace(/\s/g, '').length >= 3 ? '' : text === trimmed ? line : text;
    })
    .join('\n');
}

/** The leading number of a numbered heading or paragraph ("15" of "15.2. Claims"), if any. */
function sectionNumber(text: string): string | undefined {
  return /^(?:#+\s+)?(\d+)\.(?:\d+\.?)*\s/.exec(text)?.[1];
}

function isHeading(paragraph: string): boolean {
  return (
    paragraph.length <= HEADING_MAX_LENGTH &&
    !paragraph.includes('\n') &&
    !/[.!?:;,]["'\u201d\u2019)\]]*$/.test(paragraph) &&
    HEADING.test(paragraph)
  );
}

/** The text's paragraphs, decoration dropped, trimmed, empty ones left out. */
function paragraphsOf(text: string): string[] {
  return removeDecoration(text)
    .split(PARAGRAPH_BREAK)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== '');
}

function splitIntoPieces(text: string, maxLength: number): TextPiece[] {
  return paragraphsOf(text).flatMap((paragraph) =>
    isHeading(paragraph)
      ? [{ text: paragraph, separator: '\n\n', heading: true }]
      : splitToFit({ text: paragraph, separator: '\n\n' }, maxLength, 0),
  );
}

/**
 * A piece that ends mid-sentence: the next, if it starts in lower case, carries on its sentence. A line taken for a
 * heading may be one too ("Book a check-out inspection" at the end of a page, "before you leave." on the next).
 */
function mayContinue(piece: TextPiece): boolean {
  return !SENTENCE_END.test(piece.text);
}

/**
 * Joins again a sentence that a paragraph break cut (a PDF's page break, or a blank line in a text): a piece ending
 * mid-sentence and the next starting in lower case become one, as a line break, refitted to the passage length.
 */
function joinCutSentences(pieces: TextPiece[], maxLength: number): TextPiece[] {
  const joined: TextPiece[] = [];
  for (const piece of pieces) {
    const previous = joined[joined.length - 1];
    // A piece starting in lower case is never a heading.
    const paragraphBreak = piece.separator === '\n\n';
    if (previous && paragraphBreak && mayContinue(previous) && CONTINUATION.test(piece.text)) {
      joined.pop();
      joined.push(
        ...splitToFit({ text: `${previous.text}\n${piece.text}`, separator: previous.separator }, maxLength, 0),
      );
    } else {
      joined.push(piece);
    }
  }
  return joined;
}

/** Each level is only used for pieces the previous level left too long. */
const SPLIT_LEVELS: ReadonlyArray<(text: string, maxLength: number) => TextPiece[]> = [
  (text) => splitAtGaps(text, CLAUSE_GAP),
  (text) => splitAtGaps(text, SENTENCE_GAP),
  (text) => splitAtGaps(text, WORD_GAP),
  (text, maxLength) => cutIntoChunks(text, maxLength),
];

function splitToFit(piece: TextPiece, maxLength: number, level: number): TextPiece[] {
  if (piece.text.length <= maxLength || level >= SPLIT_LEVELS.length) return [piece];
  const parts = SPLIT_LEVELS[level](piece.text, maxLength);
  // The first part takes over the separator that joined the whole piece to what came before.
  parts[0] = { ...parts[0], separator: piece.separator };
  return parts.flatMap((part) => splitToFit(part, maxLength, level + 1));
}

function splitAtGaps(text: string, gap: RegExp): TextPiece[] {
  const pieces: TextPiece[] = [];
  let start = 0;
  let separator = '';
  for (const match of text.matchAll(gap)) {
    const end = match.index;
    if (end > start) pieces.push({ text: text.slice(start, end), separator });
    separator = match[0] === '' ? '' : match[0].includes('\n') ? '\n' : ' ';
    start = end + match[0].length;
  }
  if (start < text.length) pieces.push({ text: text.slice(start), separator });
  return pieces;
}

function cutIntoChunks(text: string, maxLength: number): TextPiece[] {
  const pieces: TextPiece[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + maxLength, text.length);
    // Never separate the two halves of a surrogate pair (emoji, rare CJK characters).
    if (end < text.length && end - start > 1 && isLowSurrogate(text.charCodeAt(end))) end -= 1;
    pieces.push({ text: text.slice(start, end), separator: '' });
    start = end;
  }
  return pieces;
}

/** The passage's last whole sentences, at most `overlap` characters in all; none when its last sentence is longer. */
function overlapTail(passage: string, overlap: number): string {
  if (overlap === 0) return '';
  let start = passage.length;
  for (const match of [...passage.matchAll(SENTENCE_GAP)].reverse()) {
    const sentenceStart = match.index + match[0].length;
    if (passage.length - sentenceStart > overlap) break;
    start = sentenceStart;
  }
  if (start === passage.length && passage.length <= overlap) return passage;
  return passage.slice(start).trim();
}

function isLowSurrogate(charCode: number): boolean {
  return charCode >= 0xdc00 && charCode <= 0xdfff;
}
