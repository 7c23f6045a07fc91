import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';

/** Generated inputs that are slow to build live here (ignored by git). */
export const CACHE_DIR = join(__dirname, '..', '.cache');

const PAGE_WIDTH = 612;
const PAGE_HEIGHT = 792;
const MARGIN = 40;
const FONT_SIZE = 9;
const LINE_HEIGHT = 11;
const LINES_PER_PAGE = Math.floor((PAGE_HEIGHT - 2 * MARGIN) / LINE_HEIGHT);
/** Helvetica at 9 pt averages under 5 pt a character, so this stays inside the 532 pt text width. */
const CHARS_PER_LINE = 100;

/** A small deterministic PRNG (mulberry32), so every run benchmarks the same bytes. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Prose-like lines: words drawn from a 4,000-word generated vocabulary, sentences of 6-20 words. */
export class TextSource {
  private readonly random: () => number;
  private readonly words: string[];
  private sentenceLeft = 0;

  constructor(seed = 42) {
    this.random = prng(seed);
    const letters = 'etaoinshrdlucmfwypvbgkjqxz';
    const pick = () => letters[Math.floor(Math.pow(this.random(), 1.6) * letters.length)];
    this.words = Array.from({ length: 4000 }, () =>
      Array.from({ length: 2 + Math.floor(this.random() * 9) }, pick).join(''),
    );
  }

  line(maxChars = CHARS_PER_LINE): string {
    let line = '';
    for (;;) {
      let word = this.words[Math.floor(Math.pow(this.random(), 2) * this.words.length)];
      if (this.sentenceLeft === 0) {
        word = word[0].toUpperCase() + word.slice(1);
        this.sentenceLeft = 6 + Math.floor(this.random() * 15);
      }
      this.sentenceLeft--;
      if (this.sentenceLeft === 0) word += '.';
      else if (this.random() < 0.06) word += ',';
      if (line.length + 1 + word.length > maxChars) return line;
      line = line ? `${line} ${word}` : word;
    }
  }
}

/** A PDF of `pageCount` Letter pages, each filled with lines of Helvetica text (about 6 KB of text a page). */
export async function buildTextDensePdf(pageCount: number, seed = 42): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const text = new TextSource(seed);
  for (let index = 0; index < pageCount; index++) {
    const page = pdf.addPage([PAGE_WIDTH, PAGE_HEIGHT]);
    const lines = Array.from({ length: LINES_PER_PAGE }, () => text.line());
    page.drawText(lines.join('\n'), {
      x: MARGIN,
      y: PAGE_HEIGHT - MARGIN - FONT_SIZE,
      size: FONT_SIZE,
      lineHeight: LINE_HEIGHT,
      font,
    });
  }
  return Buffer.from(await pdf.save());
}

/** Text-dense pages appended until the file reaches `targetBytes`; built once and cached under bench/.cache/. */
export async function cachedPdfOfSize(targetBytes: number): Promise<{ path: string; bytes: Buffer; pages: number }> {
  mkdirSync(CACHE_DIR, { recursive: true });
  const path = join(CACHE_DIR, `text-dense-${targetBytes}.pdf`);
  const metaPath = `${path}.json`;
  if (existsSync(path) && existsSync(metaPath)) {
    const { pages } = JSON.parse(readFileSync(metaPath, 'utf8')) as { pages: number };
    return { path, bytes: readFileSync(path), pages };
  }
  // Size a sample, then scale: bytes grow linearly with pages.
  const sample = await buildTextDensePdf(200);
  let pages = Math.floor((targetBytes / sample.length) * 200);
  let bytes = await buildTextDensePdf(pages);
  while (bytes.length > targetBytes) {
    pages = Math.floor(pages * (targetBytes / bytes.length) * 0.998);
    bytes = await buildTextDensePdf(pages);
  }
  writeFileSync(`${path}.tmp`, bytes);
  renameSync(`${path}.tmp`, path);
  writeFileSync(metaPath, JSON.stringify({ pages, bytes: bytes.length }));
  return { path, bytes, pages };
}
