import { PNG_BYTES, buildSampleDocx, buildSamplePdf, buildZip } from '../test/document-fixtures';
import { ExtractionError } from './extraction.error';
import { assertDeclaredType, sniffFileType } from './file-type.sniffer';

const OLE_BYTES = Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(512)]);

function thrownBy(action: () => void): ExtractionError {
  try {
    action();
  } catch (error) {
    if (error instanceof ExtractionError) return error;
    throw error;
  }
  throw new Error('expected an ExtractionError');
}

describe('sniffFileType', () => {
  it('recognises PDF, DOCX, other zips, OLE, binary and text', async () => {
    expect(sniffFileType(await buildSamplePdf(1))).toBe('pdf');
    expect(sniffFileType(await buildSampleDocx())).toBe('docx');
    expect(sniffFileType(buildZip([{ name: 'notes.txt', data: Buffer.from('hello') }]))).toBe('zip');
    expect(sniffFileType(OLE_BYTES)).toBe('ole');
    expect(sniffFileType(PNG_BYTES)).toBe('binary');
    expect(sniffFileType(Buffer.from('plain words\n'))).toBe('text');
  });

  it('treats UTF-16 with a byte-order mark as text despite its NUL bytes', () => {
    expect(sniffFileType(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hi', 'utf16le')]))).toBe('text');
  });

  it('accepts a PDF header after leading junk only when the file also ends like a PDF', async () => {
    const pdf = await buildSamplePdf(1);
    expect(sniffFileType(Buffer.concat([Buffer.from('junk\n'), pdf]))).toBe('pdf');
    expect(sniffFileType(Buffer.from('A note about the %PDF-1.7 format.'))).toBe('text');
  });
});

describe('assertDeclaredType', () => {
  it('accepts content that matches the declared type', async () => {
    expect(() => assertDeclaredType('pdf', Buffer.from('%PDF-1.4\n'))).not.toThrow();
    expect(() =>
      assertDeclaredType('docx', buildZip([{ name: 'word/document.xml', data: Buffer.from('<w/>') }])),
    ).not.toThrow();
    expect(() => assertDeclaredType('txt', Buffer.from('hello'))).not.toThrow();
  });

  it('refuses a PNG declared as text and a PDF declared as docx', async () => {
    const png = thrownBy(() => assertDeclaredType('txt', PNG_BYTES));
    expect(png.code).toBe('type_mismatch');
    expect(png.message).toBe('The file content does not match the declared type "txt"');

    const pdf = thrownBy(() => assertDeclaredType('docx', Buffer.from('%PDF-1.4\n')));
    expect(pdf.code).toBe('type_mismatch');
    expect(pdf.message).toBe('The file content does not match the declared type "docx"');
  });

  it('explains that legacy .doc files are not supported', () => {
    const error = thrownBy(() => assertDeclaredType('docx', OLE_BYTES));
    expect(error.code).toBe('type_mismatch');
    expect(error.message).toMatch(/\.doc files are not supported/);
  });

  it('refuses random bytes declared as PDF', () => {
    expect(thrownBy(() => assertDeclaredType('pdf', Buffer.from([0, 1, 2, 3, 250, 251]))).code).toBe('type_mismatch');
  });
});
