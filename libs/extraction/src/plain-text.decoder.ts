import { ExtractionError } from './extraction.error';

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const UTF16_LE_BOM = [0xff, 0xfe];
const UTF16_BE_BOM = [0xfe, 0xff];

/**
 * windows-1252 differs from Latin-1 only in 0x80-0x9F, where it has printable characters (curly quotes,
 * dashes, the euro sign) instead of control codes. Node's TextDecoder treats "windows-1252" as plain Latin-1,
 * so those 32 code points are mapped here; the five undefined ones stay as they are.
 */
const WINDOWS_1252_HIGH_CONTROL_RANGE = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

/**
 * Decodes a plain-text upload: UTF-8 (with or without BOM), UTF-16 with a BOM, otherwise windows-1252,
 * which is what legacy Windows editors write and which accepts any byte sequence.
 */
export function decodeText(bytes: Buffer): string {
  const text = decodeWithDetectedEncoding(bytes);
  if (text.trim() === '') throw new ExtractionError('no_text', 'The text file is empty');
  return text;
}

function decodeWithDetectedEncoding(bytes: Buffer): string {
  if (hasPrefix(bytes, UTF8_BOM)) return new TextDecoder('utf-8').decode(bytes.subarray(UTF8_BOM.length));
  if (hasPrefix(bytes, UTF16_LE_BOM)) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (hasPrefix(bytes, UTF16_BE_BOM)) return decodeUtf16BigEndian(bytes.subarray(2));
  return decodeUtf8Strictly(bytes) ?? decodeWindows1252(bytes);
}

function decodeUtf8Strictly(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function decodeUtf16BigEndian(bytes: Buffer): string {
  // Swapping into a copy avoids relying on ICU support for "utf-16be"; an odd trailing byte cannot be a character.
  const swapped = Buffer.from(bytes.subarray(0, bytes.length - (bytes.length % 2)));
  return new TextDecoder('utf-16le').decode(swapped.swap16());
}

function decodeWindows1252(bytes: Buffer): string {
  return bytes
    .toString('latin1')
    .replace(/[\x80-\x9f]/g, (character) =>
      String.fromCharCode(WINDOWS_1252_HIGH_CONTROL_RANGE[character.charCodeAt(0) - 0x80]),
    );
}

function hasPrefix(bytes: Buffer, prefix: readonly number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((byte, index) => bytes[index] === byte);
}
