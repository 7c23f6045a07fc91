import { ExtractionError } from './extraction.error';
import { decodeText } from './plain-text.decoder';

const SAMPLE = 'café crème brûlée – “quoted” €5';

describe('decodeText', () => {
  it('decodes UTF-8 with and without a byte-order mark', () => {
    expect(decodeText(Buffer.from(SAMPLE, 'utf8'))).toBe(SAMPLE);
    expect(decodeText(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(SAMPLE, 'utf8')]))).toBe(SAMPLE);
  });

  it('decodes UTF-16 little and big endian with a byte-order mark', () => {
    const littleEndian = Buffer.from(SAMPLE, 'utf16le');
    expect(decodeText(Buffer.concat([Buffer.from([0xff, 0xfe]), littleEndian]))).toBe(SAMPLE);
    const bigEndian = Buffer.from(littleEndian).swap16();
    expect(decodeText(Buffer.concat([Buffer.from([0xfe, 0xff]), bigEndian]))).toBe(SAMPLE);
  });

  it('falls back to windows-1252 for bytes that are not valid UTF-8', () => {
    expect(decodeText(Buffer.from('caf\xe9 cr\xe8me br\xfbl\xe9e', 'latin1'))).toBe('café crème brûlée');
    expect(decodeText(Buffer.from([0x93, 0x68, 0x69, 0x94, 0x20, 0x80, 0x35]))).toBe('“hi” €5');
  });

  it('rejects an empty or blank file with no_text', () => {
    for (const bytes of [Buffer.alloc(0), Buffer.from(' \n\t \r\n')]) {
      expect(() => decodeText(bytes)).toThrow(ExtractionError);
      expect(() => decodeText(bytes)).toThrow(expect.objectContaining({ code: 'no_text' }));
    }
  });
});
