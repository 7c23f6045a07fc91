import { lengthAwarePage, pageWindow } from './paginate';

describe('pageWindow (Laravel UrlWindow, three on each side)', () => {
  it('shows every page when there are fewer than 14', () => {
    expect(pageWindow(1, 1)).toEqual([1]);
    expect(pageWindow(5, 13)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  });

  it('shows ten pages, a gap and the last two near the start', () => {
    expect(pageWindow(7, 20)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, null, 19, 20]);
  });

  it('shows the first two, a gap and the last ten near the end', () => {
    expect(pageWindow(14, 20)).toEqual([1, 2, null, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
  });

  it('shows a window of seven in the middle, with gaps either side', () => {
    expect(pageWindow(10, 20)).toEqual([1, 2, null, 7, 8, 9, 10, 11, 12, 13, null, 19, 20]);
  });
});

describe('lengthAwarePage', () => {
  const location = { path: 'http://h/api/x', query: { status: 'ended' } };

  it('keeps other query parameters in links, page last', () => {
    const page = lengthAwarePage(['a'], 1, { page: 1, perPage: 15 }, location);
    expect(page.first_page_url).toBe('http://h/api/x?status=ended&page=1');
    expect(page.links).toEqual([
      { url: null, label: '&laquo; Previous', active: false },
      { url: 'http://h/api/x?status=ended&page=1', label: '1', active: true },
      { url: null, label: 'Next &raquo;', active: false },
    ]);
    expect([page.from, page.to, page.last_page]).toEqual([1, 1, 1]);
  });

  it('has one page and null from/to when empty', () => {
    const page = lengthAwarePage([], 0, { page: 1, perPage: 15 }, location);
    expect([page.from, page.to, page.last_page, page.total]).toEqual([null, null, 1, 0]);
  });
});
