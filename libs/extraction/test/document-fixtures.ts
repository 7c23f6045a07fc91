// Builders for documents used by the extraction specs. Kept outside src so they are not part of the build.
import { AlignmentType, Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx';
import { PDFDocument, PDFHexString, rgb, StandardFonts } from 'pdf-lib';
import { crc32, deflateRawSync } from 'node:zlib';

export const PDF_HEADER_LINE = 'ACME Corp Confidential';

const PDF_TOPICS = [
  'revenue forecasts',
  'warehouse logistics',
  'customer retention',
  'hiring plans',
  'energy costs',
  'supplier audits',
];

/** Body lines of page `pageNumber` (1-based) of the sample PDF; different words on every page. */
export function samplePdfBody(pageNumber: number): string[] {
  const topic = PDF_TOPICS[(pageNumber - 1) % PDF_TOPICS.length];
  return [`This section of the quarterly report covers ${topic}.`, `Our ${topic} improved steadily across the year.`];
}

/** A PDF whose pages each carry a running header, body text and a "Page N of M" footer. */
export async function buildSamplePdf(pageCount = 4): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (let pageNumber = 1; pageNumber <= pageCount; pageNumber += 1) {
    const page = pdf.addPage([612, 792]);
    page.drawText(PDF_HEADER_LINE, { x: 50, y: 750, size: 10, font });
    samplePdfBody(pageNumber).forEach((line, index) =>
      page.drawText(line, { x: 50, y: 600 - index * 18, size: 12, font }),
    );
    page.drawText(`Page ${pageNumber} of ${pageCount}`, { x: 270, y: 30, size: 10, font });
  }
  return Buffer.from(await pdf.save());
}

/** A PDF of the given pages, each a list of lines of body text, as a word processor lays a text out. */
export async function buildPdfOfLines(pages: string[][]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = pdf.addPage([612, 792]);
    lines.forEach((line, index) => page.drawText(line, { x: 50, y: 740 - index * 16, size: 11, font }));
  }
  return Buffer.from(await pdf.save());
}

/**
 * The sample PDF behind the standard security handler (RC4, revision 2) with a user password: its /U entry
 * matches no empty password, so a reader stops at the password check. The content is left unencrypted, which
 * no reader gets far enough to notice.
 */
export async function buildPasswordProtectedPdf(): Promise<Buffer> {
  const pdf = await PDFDocument.load(await buildSamplePdf(2));
  const { context } = pdf;
  const hash = (seed: string) => PDFHexString.of(Buffer.alloc(32, seed).toString('hex'));
  context.trailerInfo.Encrypt = context.register(
    context.obj({ Filter: 'Standard', V: 1, R: 2, Length: 40, O: hash('owner'), U: hash('user'), P: -3904 }),
  );
  const fileId = PDFHexString.of('0123456789abcdef0123456789abcdef');
  context.trailerInfo.ID = context.obj([fileId, fileId]);
  // A classic trailer, where every reader looks for /Encrypt.
  return Buffer.from(await pdf.save({ useObjectStreams: false }));
}

/** A PDF with drawings but no text, like a scan. */
export async function buildTextlessPdf(): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([612, 792]);
  page.drawRectangle({ x: 100, y: 100, width: 300, height: 200, color: rgb(0.2, 0.4, 0.8) });
  return Buffer.from(await pdf.save());
}

export const DOCX_HEADING = 'Onboarding Guide';
export const DOCX_PARAGRAPHS = [
  'Welcome to the support team. This guide explains our escalation policy.',
  'Customers on the premium plan receive answers within four hours.',
];
export const DOCX_TABLE_CELLS = ['Plan', 'Response time', 'Premium', 'Four hours'];

export async function buildSampleDocx(): Promise<Buffer> {
  const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] });
  const document = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: DOCX_HEADING, heading: HeadingLevel.HEADING_1 }),
          ...DOCX_PARAGRAPHS.map(
            (text) => new Paragraph({ alignment: AlignmentType.LEFT, children: [new TextRun(text)] }),
          ),
          new Table({
            rows: [
              new TableRow({ children: [cell(DOCX_TABLE_CELLS[0]), cell(DOCX_TABLE_CELLS[1])] }),
              new TableRow({ children: [cell(DOCX_TABLE_CELLS[2]), cell(DOCX_TABLE_CELLS[3])] }),
            ],
          }),
        ],
      },
    ],
  });
  return Packer.toBuffer(document);
}

export interface ZipEntryInput {
  name: string;
  data: Buffer;
  /** Sizes to write into the headers instead of the real ones, to fake what an archive claims. */
  declaredSizes?: { compressed: number; uncompressed: number };
}

/** A minimal deflate-compressed zip archive (local headers, central directory, end record). */
export function buildZip(entries: ZipEntryInput[]): Buffer {
  const localParts: Buffer[] = [];
  const centralParts: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const compressed = deflateRawSync(entry.data);
    const compressedSize = entry.declaredSizes?.compressed ?? compressed.length;
    const uncompressedSize = entry.declaredSizes?.uncompressed ?? entry.data.length;
    const checksum = crc32(entry.data);

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(checksum, 14);
    local.writeUInt32LE(compressedSize, 18);
    local.writeUInt32LE(uncompressedSize, 22);
    local.writeUInt16LE(name.length, 26);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    central.writeUInt16LE(20, 6); // version needed
    central.writeUInt16LE(8, 10); // deflate
    central.writeUInt32LE(checksum, 16);
    central.writeUInt32LE(compressedSize, 20);
    central.writeUInt32LE(uncompressedSize, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);

    localParts.push(local, name, compressed);
    centralParts.push(central, name);
    offset += local.length + name.length + compressed.length;
  }
  const centralDirectory = Buffer.concat(centralParts);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralDirectory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...localParts, centralDirectory, end]);
}

export const PNG_BYTES = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6300010000050001' +
    '0d0a2db40000000049454e44ae426082',
  'hex',
);
