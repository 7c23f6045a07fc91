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
}

const DEFAULT_TARGET_LENGTH = 1000;
const DEFAULT_OVERLAP = 150;
const PARAGRAPH_BREAK = /\n\s*\n/;
/** After . ! ? (and closing quotes or brackets) followed by whitespace, or after CJK full stops which need none. */
const SENTENCE_GAP = /(?<=[.!?]["'”’)\]]*)\s+|(?<=[。！？])(?![。！？])\s*/gu;
const WORD_GAP = /\s+/g;
const SENTENCE_START = /(?<=[.!?]["'”’)\]]*)\s+\S|(?<=[。！？])[^\s。！？]/u;

/**
 * Packs whole paragraphs greedily into passages of about `targetLength` characters, so a search hit comes
 * with enough context. Oversized paragraphs are split into sentences, oversized sentences into words, and
 * oversized words (such as CJK runs without spaces) are cut. Each passage after the first repeats the tail
 * of the previous one, so text near a boundary is still found together with its neighbours.
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
  /** The passage being packed. */
  private current = '';

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
    const passages: string[] = [];
    for (const piece of splitIntoPieces(text, this.targetLength)) {
      if (this.current === '') {
        this.current = piece.text;
      } else if (this.current.length + piece.separator.length + piece.text.length <= this.targetLength) {
        this.current += piece.separator + piece.text;
      } else {
        passages.push(this.current);
        const tail = overlapTail(this.current, this.overlap);
        this.current = tail === '' ? piece.text : tail + piece.separator + piece.text;
      }
    }
    return passages;
  }

  /** The last passage, once the text has ended. */
  finish(): string[] {
    const last = this.current;
    this.current = '';
    return last === '' ? [] : [last];
  }
}

function splitIntoPieces(text: string, maxLength: number): TextPiece[] {
  const paragraphs = text
    .split(PARAGRAPH_BREAK)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== '');
  return paragraphs.flatMap((paragraph) => splitToFit({ text: paragraph, separator: '\n\n' }, maxLength, 0));
}

/** Each level is only used for pieces the previous level left too long. */
const SPLIT_LEVELS: ReadonlyArray<(text: string, maxLength: number) => TextPiece[]> = [
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

/** The last `overlap` characters or fewer, starting at a sentence start if that keeps enough, else at a word start. */
function overlapTail(passage: string, overlap: number): string {
  if (overlap === 0) return '';
  if (passage.length <= overlap) return passage;
  let start = passage.length - overlap;
  if (isLowSurrogate(passage.charCodeAt(start))) start += 1;
  const window = passage.slice(start);
  if (/\s/.test(passage[start - 1])) return window.trim();

  const sentenceStart = window.search(SENTENCE_START);
  if (sentenceStart > 0 && window.length - sentenceStart >= overlap / 2) return window.slice(sentenceStart).trim();
  const wordStart = window.search(/(?<=\s)\S/);
  if (wordStart > 0) return window.slice(wordStart).trim();
  return window.trim();
}

function isLowSurrogate(charCode: number): boolean {
  return charCode >= 0xdc00 && charCode <= 0xdfff;
}
