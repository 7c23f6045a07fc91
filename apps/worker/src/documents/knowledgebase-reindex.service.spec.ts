import { Logger } from '@nestjs/common';
import type { DocumentsRepository } from '@app/database';
import { KnowledgebaseReindex } from './knowledgebase-reindex.service';

describe('KnowledgebaseReindex, with a fake repository', () => {
  // Each run logs what it did; a unit run has no one to read it.
  beforeAll(() => Logger.overrideLogger(false));

  it('moves passages a batch at a time until a batch comes back short', async () => {
    let left = 2500;
    const batches: unknown[][] = [];
    const documents = {
      reindexPassages: async (knowledgebaseId: number, batch: number) => {
        batches.push([knowledgebaseId, batch]);
        const moved = Math.min(left, batch);
        left -= moved;
        return moved;
      },
    };
    const reindex = new KnowledgebaseReindex(documents as unknown as DocumentsRepository);
    await expect(reindex.reindex({ knowledgebaseId: 8 })).resolves.toEqual({ status: 'reindexed', passages: 2500 });
    expect(batches).toEqual([
      [8, 1000],
      [8, 1000],
      [8, 1000],
    ]);
  });

  it('stops after one statement when nothing is left to move', async () => {
    const documents = { reindexPassages: jest.fn(async () => 0) };
    const reindex = new KnowledgebaseReindex(documents as unknown as DocumentsRepository);
    await expect(reindex.reindex({ knowledgebaseId: 8 })).resolves.toEqual({ status: 'reindexed', passages: 0 });
    expect(documents.reindexPassages).toHaveBeenCalledTimes(1);
  });
});
