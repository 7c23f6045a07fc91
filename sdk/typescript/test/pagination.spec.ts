import { lengthAwarePage, slimPage } from '@app/contracts';
import { ApiError, type Answer, items, pages } from '../src/index.js';

const ROWS = Array.from({ length: 23 }, (_, index) => ({ id: 23 - index }));

/** Page `page` of ROWS as the API renders it, as the client resolves it. */
const answer = <T>(body: T): Promise<Answer<T>> =>
  Promise.resolve({ data: body, response: new Response(JSON.stringify(body), { status: 200 }) });
const failure = (body: unknown, status: number): Promise<Answer<never>> =>
  Promise.resolve({ error: body, response: new Response(JSON.stringify(body), { status }) });
const slice = (rows: typeof ROWS, page: number, perPage: number) => rows.slice((page - 1) * perPage, page * perPage);
async function collect<T>(walk: AsyncIterable<T>): Promise<T[]> {
  const collected: T[] = [];
  for await (const item of walk) collected.push(item);
  return collected;
}
const location = { path: 'http://localhost:3000/api/user/assistants/get', query: {} };

describe('Walking Laravel pages', () => {
  it('reads every page of a length-aware list, then stops', async () => {
    const asked: number[] = [];
    const fetchPage = (page: number) => {
      asked.push(page);
      return answer(lengthAwarePage(slice(ROWS, page, 10), ROWS.length, { page, perPage: 10 }, location));
    };
    expect((await collect(items(fetchPage))).map(({ id }) => id)).toEqual(ROWS.map(({ id }) => id));
    expect(asked).toEqual([1, 2, 3]);
  });

  it('reads every page of a slim list, the last one full or not', async () => {
    for (const [rows, perPage, expected] of [
      [ROWS, 10, 3],
      [ROWS.slice(0, 20), 10, 2],
      [[], 15, 1],
    ] as const) {
      const walked = await collect(
        pages((page) => answer(slimPage(slice([...rows], page, perPage), rows.length, { page, perPage }))),
      );
      expect({ pages: walked.length, rows: walked.flatMap((page) => page.data).length }).toEqual({
        pages: expected,
        rows: rows.length,
      });
    }
  });

  it('stops at an empty page of a length-aware list that shrank while being walked', async () => {
    const fetchPage = (page: number) =>
      answer(lengthAwarePage(page === 1 ? slice(ROWS, 1, 10) : [], ROWS.length, { page, perPage: 10 }, location));
    expect(await collect(items(fetchPage))).toHaveLength(10);
  });

  it('throws the API’s answer when a page fails', async () => {
    const walk = collect(
      pages((page) =>
        page === 1
          ? answer(slimPage(slice(ROWS, 1, 10), ROWS.length, { page, perPage: 10 }))
          : failure({ message: 'The per page field must be between 1 and 100.', errors: {} }, 422),
      ),
    );
    await expect(walk).rejects.toThrow(ApiError);
    await expect(walk).rejects.toMatchObject({
      status: 422,
      message: '422 The per page field must be between 1 and 100.',
    });
  });
});
