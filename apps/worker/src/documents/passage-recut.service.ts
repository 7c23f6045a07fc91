import { Injectable, Logger } from '@nestjs/common';
import { PASSAGE_CUT_VERSION, rejoinPassages, splitIntoPassages } from '@app/extraction';
import { DocumentsRepository, type IngestedPassage } from '@app/database';
import { HandlesJob, Jobs } from '@app/jobs';

/** How long one run re-cuts documents before leaving the rest to the next run (it finishes the one it is on). */
const RUN_BUDGET_MS = 20_000;

/**
 * Cuts again the passages an earlier version of the cutter wrote: the uploaded file is gone once a document is
 * ingested, so the text is put back together from the passages themselves (their overlaps removed), page by page
 * for a website (each page was cut on its own), and cut as a new document's would be.
 */
export function recutPassages(passages: IngestedPassage[]): IngestedPassage[] {
  const recut: IngestedPassage[] = [];
  for (let start = 0; start < passages.length;) {
    const sourceUrl = passages[start].sourceUrl;
    let end = start + 1;
    while (end < passages.length && passages[end].sourceUrl === sourceUrl) end += 1;
    const text = rejoinPassages(passages.slice(start, end).map((passage) => passage.content));
    recut.push(...splitIntoPassages(text).map((content) => ({ content, sourceUrl })));
    start = end;
  }
  return recut;
}

/** The worker's side of `recut-passages`: document after document, each in its own transaction. */
@Injectable()
export class PassageRecut {
  private readonly logger = new Logger(PassageRecut.name);

  constructor(private readonly documents: DocumentsRepository) {}

  @HandlesJob(Jobs.recutPassages)
  async recut(): Promise<{ documents: number; passages: number }> {
    const deadline = Date.now() + RUN_BUDGET_MS;
    let documents = 0;
    let passages = 0;
    while (Date.now() < deadline) {
      const written = await this.documents.recutNext(PASSAGE_CUT_VERSION, recutPassages);
      if (written === undefined) break;
      documents += 1;
      passages += written;
    }
    if (documents > 0) this.logger.log({ documents, passages }, 're-cut passages');
    return { documents, passages };
  }
}
