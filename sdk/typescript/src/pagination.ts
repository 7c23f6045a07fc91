import { type Answer, unwrap } from './answers.js';
import type { components } from './generated/api.js';

type Schemas = components['schemas'];

/** Laravel's `LengthAwarePaginator` page (assistants, campaigns, leads, calls, a call's events). */
export type LengthAwarePage<T> = Schemas['LengthAwarePageMeta'] & { data: T[] };
/** The slim page (folders, labels): no links, but the total. */
export type SlimPage<T> = Schemas['SlimPageMeta'] & { data: T[] };

type Page<T> = LengthAwarePage<T> | SlimPage<T>;

/**
 * Every page of a list, from the first, until the last: `fetchPage` asks for page `page` of the list (with whatever
 * filters and `per_page` the caller wants). Lists are newest first, by offset: a row created while walking pushes the
 * rows after it a place down, so one may come twice; one deleted may be missed.
 *
 *     for await (const page of pages((page) => api.GET('/api/user/leads', { params: { query: { page, per_page: 100 } } })))
 */
export async function* pages<P extends Page<unknown>>(
  fetchPage: (page: number) => Promise<Answer<P>>,
): AsyncGenerator<P> {
  for (let number = 1; ; number++) {
    const page = unwrap(await fetchPage(number));
    yield page;
    if (page.data.length === 0 || isLast(page)) return;
  }
}

/** Every item of a list, page after page (see `pages`). */
export async function* items<T>(fetchPage: (page: number) => Promise<Answer<Page<T>>>): AsyncGenerator<T> {
  for await (const page of pages(fetchPage)) yield* page.data;
}

function isLast(page: Page<unknown>): boolean {
  return 'last_page' in page ? page.current_page >= page.last_page : page.current_page * page.per_page >= page.total;
}
