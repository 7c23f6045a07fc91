import { DOCX_HEADING, DOCX_PARAGRAPHS, DOCX_TABLE_CELLS, buildSampleDocx, buildZip } from '../test/document-fixtures';
import { extractDocx } from './docx.extractor';

const MEGABYTE = 1024 * 1024;
const MINIMAL_DOCUMENT_XML = Buffer.from(
  '<?xml version="1.0" encoding="UTF-8"?>' +
    '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Hi</w:t></w:r></w:p></w:body></w:document>',
);

describe('extractDocx', () => {
  it('extracts headings, paragraphs and table cells', async () => {
    const text = await extractDocx(await buildSampleDocx());
    for (const expected of [DOCX_HEADING, ...DOCX_PARAGRAPHS, ...DOCX_TABLE_CELLS]) expect(text).toContain(expected);
  });

  it('refuses a zip without word/document.xml', async () => {
    const zip = buildZip([{ name: 'readme.txt', data: Buffer.from('not a word document') }]);
    await expect(extractDocx(zip)).rejects.toMatchObject({ code: 'type_mismatch' });
  });

  it('refuses bytes that are not a zip at all', async () => {
    await expect(extractDocx(Buffer.from('PK\x03\x04 but nothing else'))).rejects.toMatchObject({ code: 'corrupt' });
  });

  it('refuses a zip bomb from its central directory without inflating it', async () => {
    const bomb = buildZip([{ name: 'word/document.xml', data: Buffer.alloc(210 * MEGABYTE, 0x20) }]);
    expect(bomb.length).toBeLessThan(1 * MEGABYTE);
    const started = Date.now();
    await expect(extractDocx(bomb)).rejects.toMatchObject({
      code: 'too_large',
      message: 'The document is too large to process',
    });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses an entry over 10 MB that compresses more than 200:1', async () => {
    const archive = buildZip([
      { name: 'word/document.xml', data: MINIMAL_DOCUMENT_XML },
      { name: 'word/media/padding.bin', data: Buffer.alloc(20 * MEGABYTE) },
    ]);
    await expect(extractDocx(archive)).rejects.toMatchObject({ code: 'too_large' });
  });

  it('refuses an archive whose entries add up to more than 300 MB', async () => {
    const honestlySized = { compressed: 150 * MEGABYTE, uncompressed: 160 * MEGABYTE };
    const archive = buildZip([
      { name: 'word/document.xml', data: MINIMAL_DOCUMENT_XML },
      { name: 'word/media/one.bin', data: Buffer.from('x'), declaredSizes: honestlySized },
      { name: 'word/media/two.bin', data: Buffer.from('y'), declaredSizes: honestlySized },
    ]);
    await expect(extractDocx(archive)).rejects.toMatchObject({ code: 'too_large' });
  });

  it('reports a document without text', async () => {
    const empty = Buffer.from(
      '<?xml version="1.0" encoding="UTF-8"?>' +
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p/></w:body></w:document>',
    );
    await expect(extractDocx(buildZip([{ name: 'word/document.xml', data: empty }]))).rejects.toMatchObject({
      code: 'no_text',
      message: 'Word document has no text',
    });
  });
});
