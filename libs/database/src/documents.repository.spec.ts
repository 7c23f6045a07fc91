import { DocumentsRepository, type IngestedPage, type IngestedPassage } from './documents.repository';
import type { Document } from './entities/document.entity';

/** The version of the passage cutter the tests write with. */
const CUT = 3;

/**
 * The repository with its single statements faked over documents in memory, and its transaction running the work
 * at once: what its writes of a document are made of, in order. Every statement that writes is logged.
 */
function fakes(documents: Partial<Document>[], stored: IngestedPassage[] = []) {
  const log: unknown[][] = [];
  const logged =
    (name: string) =>
    async (...args: unknown[]) =>
      void log.push([name, ...args]);
  const statements = {
    transaction: <T>(work: (repository: unknown) => Promise<T>) => work(repository),
    lock: async (id: number) => documents.find((document) => document.id === id) ?? null,
    lockNextToRecut: async (version: number) => documents.find((document) => (document.passagesCut ?? 0) < version),
    passageTexts: async () => stored,
    nextPassagePosition: async () => 7,
    replacePages: logged('replacePages'),
    deletePassages: logged('deletePassages'),
    deletePagePassages: logged('deletePagePassages'),
    insertPassages: async (document: Document, passages: IngestedPassage[], first: number) =>
      void log.push(['insertPassages', document.id, passages, first]),
    markActive: logged('markActive'),
    markFailed: logged('markFailed'),
    deleteFile: logged('deleteFile'),
    setPassagesCut: logged('setPassagesCut'),
    writeRefresh: logged('writeRefresh'),
    writeRefreshFailure: logged('writeRefreshFailure'),
  };
  const repository = Object.assign(
    Object.create(DocumentsRepository.prototype) as DocumentsRepository,
    statements,
  ) as DocumentsRepository;
  return { repository, log };
}

const page = (url: string, characters: number): IngestedPage => ({
  url,
  status: 'fetched',
  httpStatus: 200,
  title: null,
  characters,
  error: null,
  contentHash: 'hash',
});
const passage = (content: string): IngestedPassage => ({ content, sourceUrl: null });

describe("DocumentsRepository's writes of a document, with its statements faked", () => {
  it('completes a processing document: pages, passages from 0, active at the current cut, file released', async () => {
    const { repository, log } = fakes([{ id: 3, status: 'processing' }]);
    const result = { pages: [page('https://a.test/', 5)], passages: [passage('one')], contentLength: 5 };
    await expect(repository.complete(3, result, CUT)).resolves.toBe(true);
    expect(log).toEqual([
      ['replacePages', 3, result.pages],
      ['deletePassages', 3],
      ['insertPassages', 3, result.passages, 0],
      ['markActive', 3, 5, CUT],
      ['deleteFile', 3],
    ]);
  });

  it('leaves a document that is gone or no longer processing alone', async () => {
    const { repository, log } = fakes([{ id: 3, status: 'active' }]);
    const result = { pages: [], passages: [passage('one')], contentLength: 3 };
    await expect(repository.complete(3, result, CUT)).resolves.toBe(false);
    await expect(repository.complete(4, result, CUT)).resolves.toBe(false);
    await expect(repository.fail(3, 'failed')).resolves.toBe(false);
    expect(log).toEqual([]);
  });

  it('fails a document with its message cut to 2,000 characters, keeping the pages tried only when given', async () => {
    const { repository, log } = fakes([{ id: 3, status: 'processing' }]);
    await expect(repository.fail(3, 'x'.repeat(2500))).resolves.toBe(true);
    expect(log).toEqual([
      ['deletePassages', 3],
      ['markFailed', 3, 'x'.repeat(2000)],
      ['deleteFile', 3],
    ]);

    log.length = 0;
    const pages = [page('https://a.test/', 0)];
    await repository.fail(3, 'gone', pages);
    expect(log[0]).toEqual(['replacePages', 3, pages]);
  });

  it("applies a refresh to an active document: replaced pages' passages out, new ones after the last", async () => {
    const { repository, log } = fakes([{ id: 3, status: 'active' }]);
    const counts = { pages_added: 1, pages_changed: 1, pages_removed: 0, pages_unchanged: 2 };
    const pages = [page('https://a.test/', 10), page('https://a.test/b', 32)];
    const passages = [passage('new')];
    await expect(
      repository.applyRefresh(3, { pages, replacedUrls: ['https://a.test/b'], passages, outcome: counts }),
    ).resolves.toBe(true);
    expect(log.slice(0, 3)).toEqual([
      ['deletePagePassages', 3, ['https://a.test/b']],
      ['insertPassages', 3, passages, 7],
      ['replacePages', 3, pages],
    ]);
    expect(log[3]).toEqual([
      'writeRefresh',
      3,
      42,
      { status: 'succeeded', finished_at: expect.any(String), ...counts, error: null },
    ]);
    expect(log).toHaveLength(4);
  });

  it('deletes no passages when a refresh replaces no page, and refreshes no document still processing', async () => {
    const { repository, log } = fakes([
      { id: 3, status: 'active' },
      { id: 4, status: 'processing' },
    ]);
    const outcome = { pages_added: 1, pages_changed: 0, pages_removed: 0, pages_unchanged: 0 };
    const refresh = { pages: [], replacedUrls: [], passages: [], outcome };
    await repository.applyRefresh(3, refresh);
    expect(log.map(([name]) => name)).toEqual(['insertPassages', 'replacePages', 'writeRefresh']);
    log.length = 0;
    await expect(repository.applyRefresh(4, refresh)).resolves.toBe(false);
    await expect(repository.recordRefreshFailure(4, 'down')).resolves.toBe(false);
    expect(log).toEqual([]);
  });

  it("records a failed refresh with no page counted and the message cut, keeping the document's content", async () => {
    const { repository, log } = fakes([{ id: 3, status: 'active' }]);
    await expect(repository.recordRefreshFailure(3, 'y'.repeat(2100))).resolves.toBe(true);
    expect(log).toEqual([
      [
        'writeRefreshFailure',
        3,
        {
          status: 'failed',
          finished_at: expect.any(String),
          pages_added: 0,
          pages_changed: 0,
          pages_removed: 0,
          pages_unchanged: 0,
          error: 'y'.repeat(2000),
        },
      ],
    ]);
  });

  it('re-cuts the next document an earlier cutter wrote and records the current cut; none left, undefined', async () => {
    const stored = [passage('a'), passage('b')];
    const { repository, log } = fakes([{ id: 9, status: 'active', passagesCut: CUT - 1 }], stored);
    const recut = jest.fn((passages: IngestedPassage[]) => [passage(passages.map((each) => each.content).join(''))]);
    await expect(repository.recutNext(CUT, recut)).resolves.toBe(1);
    expect(recut).toHaveBeenCalledWith(stored);
    expect(log).toEqual([
      ['deletePassages', 9],
      ['insertPassages', 9, [passage('ab')], 0],
      ['setPassagesCut', 9, CUT],
    ]);

    const { repository: done } = fakes([{ id: 9, status: 'active', passagesCut: CUT }]);
    await expect(done.recutNext(CUT, recut)).resolves.toBeUndefined();
  });
});
