import type { Document, DocumentsRepository, IngestedPage, IngestedPassage } from '@app/database';
import { PASSAGE_CUT_VERSION } from '@app/extraction';
import { DocumentStore } from './document-store.service';

/** Documents in memory, as much of the repository as the store uses; every write is logged in order. */
function fakes(documents: Partial<Document>[], stored: IngestedPassage[] = []) {
  const log: unknown[][] = [];
  const logged =
    (name: string) =>
    async (...args: unknown[]) =>
      void log.push([name, ...args]);
  const repository = {
    transaction: <T>(work: (repository: unknown) => Promise<T>) => work(repository),
    lock: async (id: number) => documents.find((document) => document.id === id) ?? null,
    lockNextToRecut: async () => documents.find((document) => (document.passagesCut ?? 0) < PASSAGE_CUT_VERSION),
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
    recordRefresh: logged('recordRefresh'),
    recordRefreshFailure: logged('recordRefreshFailure'),
  };
  return { store: new DocumentStore(repository as unknown as DocumentsRepository), log };
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

describe('DocumentStore, with a fake repository', () => {
  it('completes a processing document: pages, passages from 0, active at the current cut, file released', async () => {
    const { store, log } = fakes([{ id: 3, status: 'processing' }]);
    const result = { pages: [page('https://a.test/', 5)], passages: [passage('one')], contentLength: 5 };
    await expect(store.complete(3, result)).resolves.toBe(true);
    expect(log).toEqual([
      ['replacePages', 3, result.pages],
      ['deletePassages', 3],
      ['insertPassages', 3, result.passages, 0],
      ['markActive', 3, 5, PASSAGE_CUT_VERSION],
      ['deleteFile', 3],
    ]);
  });

  it('leaves a document that is gone or no longer processing alone', async () => {
    const { store, log } = fakes([{ id: 3, status: 'active' }]);
    const result = { pages: [], passages: [passage('one')], contentLength: 3 };
    await expect(store.complete(3, result)).resolves.toBe(false);
    await expect(store.complete(4, result)).resolves.toBe(false);
    await expect(store.fail(3, 'failed')).resolves.toBe(false);
    expect(log).toEqual([]);
  });

  it('fails a document with its message cut to 2,000 characters, keeping the pages tried only when given', async () => {
    const { store, log } = fakes([{ id: 3, status: 'processing' }]);
    await expect(store.fail(3, 'x'.repeat(2500))).resolves.toBe(true);
    expect(log).toEqual([
      ['deletePassages', 3],
      ['markFailed', 3, 'x'.repeat(2000)],
      ['deleteFile', 3],
    ]);

    log.length = 0;
    const pages = [page('https://a.test/', 0)];
    await store.fail(3, 'gone', pages);
    expect(log[0]).toEqual(['replacePages', 3, pages]);
  });

  it("applies a refresh to an active document: replaced pages' passages out, new ones after the last", async () => {
    const { store, log } = fakes([{ id: 3, status: 'active' }]);
    const counts = { pages_added: 1, pages_changed: 1, pages_removed: 0, pages_unchanged: 2 };
    const pages = [page('https://a.test/', 10), page('https://a.test/b', 32)];
    const passages = [passage('new')];
    await expect(
      store.applyRefresh(3, { pages, replacedUrls: ['https://a.test/b'], passages, outcome: counts }),
    ).resolves.toBe(true);
    expect(log.slice(0, 3)).toEqual([
      ['deletePagePassages', 3, ['https://a.test/b']],
      ['insertPassages', 3, passages, 7],
      ['replacePages', 3, pages],
    ]);
    expect(log[3]).toEqual([
      'recordRefresh',
      3,
      42,
      { status: 'succeeded', finished_at: expect.any(String), ...counts, error: null },
    ]);
    expect(log).toHaveLength(4);
  });

  it('deletes no passages when a refresh replaces no page, and refreshes no document still processing', async () => {
    const { store, log } = fakes([
      { id: 3, status: 'active' },
      { id: 4, status: 'processing' },
    ]);
    const outcome = { pages_added: 1, pages_changed: 0, pages_removed: 0, pages_unchanged: 0 };
    const refresh = { pages: [], replacedUrls: [], passages: [], outcome };
    await store.applyRefresh(3, refresh);
    expect(log.map(([name]) => name)).toEqual(['insertPassages', 'replacePages', 'recordRefresh']);
    log.length = 0;
    await expect(store.applyRefresh(4, refresh)).resolves.toBe(false);
    await expect(store.recordRefreshFailure(4, 'down')).resolves.toBe(false);
    expect(log).toEqual([]);
  });

  it("records a failed refresh with no page counted and the message cut, keeping the document's content", async () => {
    const { store, log } = fakes([{ id: 3, status: 'active' }]);
    await expect(store.recordRefreshFailure(3, 'y'.repeat(2100))).resolves.toBe(true);
    expect(log).toEqual([
      [
        'recordRefreshFailure',
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
    const { store, log } = fakes([{ id: 9, status: 'active', passagesCut: PASSAGE_CUT_VERSION - 1 }], stored);
    const recut = jest.fn((passages: IngestedPassage[]) => [passage(passages.map((each) => each.content).join(''))]);
    await expect(store.recutNext(recut)).resolves.toBe(1);
    expect(recut).toHaveBeenCalledWith(stored);
    expect(log).toEqual([
      ['deletePassages', 9],
      ['insertPassages', 9, [passage('ab')], 0],
      ['setPassagesCut', 9, PASSAGE_CUT_VERSION],
    ]);

    const { store: done } = fakes([{ id: 9, status: 'active', passagesCut: PASSAGE_CUT_VERSION }]);
    await expect(done.recutNext(recut)).resolves.toBeUndefined();
  });
});
