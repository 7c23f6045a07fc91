import type { LengthAwarePage, PageLink, SlimPage } from '../dto/pagination.dto';

/** Where a page lives: the absolute path without a query, and the query parameters to carry along. */
export interface PageLocation {
  path: string;
  query: Record<string, string>;
}

export interface PageRequest {
  page: number;
  perPage: number;
}

/** Laravel's default: three pages either side of the current one in the numbered links. */
const ON_EACH_SIDE = 3;

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, index) => from + index);
}

/**
 * The page numbers Laravel's UrlWindow shows, with `null` where it prints "...": every page when there are
 * few, otherwise the first two, a window around the current page and the last two.
 */
export function pageWindow(currentPage: number, lastPage: number): (number | null)[] {
  if (lastPage < ON_EACH_SIDE * 2 + 8) return range(1, lastPage);
  const window = ON_EACH_SIDE + 4;
  const start = [1, 2];
  const finish = [lastPage - 1, lastPage];
  if (currentPage <= window) return [...range(1, window + ON_EACH_SIDE), null, ...finish];
  if (currentPage > lastPage - window) {
    return [...start, null, ...range(lastPage - (window + (ON_EACH_SIDE - 1)), lastPage)];
  }
  return [...start, null, ...range(currentPage - ON_EACH_SIDE, currentPage + ON_EACH_SIDE), null, ...finish];
}

function pageUrl(location: PageLocation, page: number): string {
  const query = new URLSearchParams({ ...location.query, page: String(page) });
  return `${location.path}?${query.toString()}`;
}

/** Laravel's LengthAwarePaginator rendered as JSON. */
export function lengthAwarePage<T>(
  data: T[],
  total: number,
  request: PageRequest,
  location: PageLocation,
): LengthAwarePage<T> {
  const { page, perPage } = request;
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const from = data.length > 0 ? (page - 1) * perPage + 1 : null;
  const to = from === null ? null : from + data.length - 1;
  const previous = page > 1 ? pageUrl(location, page - 1) : null;
  const next = page < lastPage ? pageUrl(location, page + 1) : null;

  const numbered: PageLink[] = pageWindow(page, lastPage).map((number) =>
    number === null
      ? { url: null, label: '...', active: false }
      : { url: pageUrl(location, number), label: String(number), active: number === page },
  );

  return {
    current_page: page,
    data,
    first_page_url: pageUrl(location, 1),
    from,
    last_page: lastPage,
    last_page_url: pageUrl(location, lastPage),
    links: [
      { url: previous, label: '&laquo; Previous', active: false },
      ...numbered,
      { url: next, label: 'Next &raquo;', active: false },
    ],
    next_page_url: next,
    path: location.path,
    per_page: perPage,
    prev_page_url: previous,
    to,
    total,
  };
}

export function slimPage<T>(data: T[], total: number, request: PageRequest): SlimPage<T> {
  return { data, current_page: request.page, per_page: request.perPage, total };
}
