import { Logger } from '@nestjs/common';
import type { PassageHit } from '@app/contracts';
import type { AppConfig } from '@app/config';
import type { PassageEmbeddingsRepository } from '@app/database';
import type { ModelProvider } from '@app/model-provider';
import { MeaningSearch, nearest } from './meaning-search';

const unit = (...values: number[]) => {
  const norm = Math.hypot(...values);
  return Float32Array.from(values.map((value) => value / norm));
};

const hit = (id: number): PassageHit => ({
  id,
  document_id: 1,
  document_name: 'FAQ',
  content: `passage ${id}`,
  highlight: `passage ${id}`,
  source_url: null,
  score: 1,
});

describe('nearest', () => {
  it('answers the passages nearest the query, nearest first, at most as many as asked', () => {
    const vectors = { ids: Int32Array.from([10, 20, 30]), vectors: new Float32Array(6), dimensions: 2 };
    vectors.vectors.set([...unit(1, 0), ...unit(0, 1), ...unit(1, 1)]);
    expect(nearest(vectors, unit(1, 0.1), 2)).toEqual([10, 30]);
    expect(nearest(vectors, unit(0, 1), 5)).toEqual([20, 30, 10]);
    // A vector of another length (another model) is compared with nothing.
    expect(nearest(vectors, unit(1, 0, 0), 2)).toEqual([]);
  });
});

describe('MeaningSearch', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn']));
  const config = { modelProvider: { embeddingsModel: 'text-embedding-3-small', embeddingsDimensions: 2 } } as AppConfig;
  const provider = (embed: ModelProvider['embed']) =>
    ({ available: true, embeddingsAvailable: true, complete: jest.fn(), embed }) as unknown as ModelProvider;
  const repository = {
    version: () => Promise.resolve({ count: 3, newest: 30 }),
    vectors: () =>
      Promise.resolve({
        ids: Int32Array.from([1, 2, 3]),
        vectors: Float32Array.from([...unit(1, 0), ...unit(0, 1), ...unit(1, 1)]),
        dimensions: 2,
      }),
    hits: (_owner: number, ids: number[]) => Promise.resolve(ids.map(hit)),
  } as unknown as PassageEmbeddingsRepository;

  it('keeps a passage the words rank first above one only meaning finds, and brings in what words miss', async () => {
    const embed = jest.fn().mockResolvedValue({ vectors: [unit(0, 1)], model: 'm', usage: {} });
    const search = new MeaningSearch(config, repository, provider(embed));
    const fused = await search.fuse(7, 1, 'when can I call', 3, [hit(1)]);
    expect(fused.map((found) => found.id)).toEqual([1, 2, 3]);
    // The query's vector is kept: the same query again asks the provider nothing.
    await search.fuse(7, 1, 'when  can I call ', 3, [hit(1)]);
    expect(embed).toHaveBeenCalledTimes(1);
  });

  it('answers the lexical hits as they are when the provider fails', async () => {
    const embed = jest.fn().mockRejectedValue(new Error('down'));
    const search = new MeaningSearch(config, repository, provider(embed));
    expect(await search.fuse(7, 1, 'refund', 2, [hit(3), hit(1), hit(2)])).toEqual([hit(3), hit(1)]);
  });

  it('searches a knowledgebase whose vectors exceed what a process keeps by its words only, reading none of them', async () => {
    const embed = jest.fn().mockResolvedValue({ vectors: [unit(0, 1)], model: 'm', usage: {} });
    // 64 MiB of 2-dimension vectors (12 bytes a passage with its id) is 5,592,405 passages; the count stops past it.
    const most = Math.floor((64 * 1024 * 1024) / 12);
    const huge = { ...repository, version: jest.fn().mockResolvedValue({ count: most + 1, newest: 0 }), vectors: jest.fn() };
    const search = new MeaningSearch(config, huge as unknown as PassageEmbeddingsRepository, provider(embed));
    expect(await search.fuse(7, 1, 'refund', 2, [hit(3), hit(1), hit(2)])).toEqual([hit(3), hit(1)]);
    expect(huge.version).toHaveBeenCalledWith(7, 1, 'text-embedding-3-small/2', most);
    expect(huge.vectors).not.toHaveBeenCalled();
  });

  it('leaves quoted phrases and exclusions to the words, and applies to nothing without a model', () => {
    const search = new MeaningSearch(config, repository, provider(jest.fn()));
    expect(search.applies('refund policy')).toBe(true);
    expect(search.applies('"gift card"')).toBe(false);
    expect(search.applies('refund -voucher')).toBe(false);
    const none = new MeaningSearch({} as AppConfig, repository, {
      embeddingsAvailable: false,
    } as unknown as ModelProvider);
    expect(none.applies('refund policy')).toBe(false);
  });
});
