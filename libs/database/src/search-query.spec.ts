import { parseSearchQuery } from './search-query';

describe('parseSearchQuery', () => {
  it('reads words, required phrases and exclusions as typed into a search box', () => {
    expect(parseSearchQuery('opening hours "nine to five" -closed -"bank holiday" OR friday')).toEqual({
      words: ['opening', 'hours', 'friday', 'nine to five'],
      phrases: ['nine to five'],
      excluded: ['closed', 'bank holiday'],
      expandable: ['opening', 'hours', 'friday'],
      runs: ['opening hours'],
    });
  });

  it('expands common words only: not names, numbers, codes or phrases', () => {
    expect(parseSearchQuery('Can my kid cancel? ask Ada about order 1234, SKU-9 or "gift card"').expandable).toEqual([
      'Can',
      'my',
      'kid',
      'cancel',
      'ask',
      'about',
      'order',
      'or',
    ]);
    expect(parseSearchQuery('Paris Hilton').expandable).toEqual(['Paris']);
  });

  it('expands an HTTP status code to its class, and no other number', () => {
    expect(parseSearchQuery('retried on 503, or 429? not 600, 99 or 5030').expandable).toEqual([
      'retried',
      'on',
      '503',
      'or',
      '429',
      'not',
      'or',
    ]);
    // A code ends a run of words, as any number does.
    expect(parseSearchQuery('back 404 off').runs).toEqual([]);
  });

  it('offers runs of two and three common words in a row, for phrasal verbs', () => {
    expect(parseSearchQuery('Get rid of it').runs).toEqual(['get rid', 'rid of', 'get rid of', 'of it', 'rid of it']);
    // Punctuation, a name, a quoted phrase or an exclusion ends a run.
    expect(parseSearchQuery('call, off').runs).toEqual([]);
    expect(parseSearchQuery('call Ada off').runs).toEqual([]);
    expect(parseSearchQuery('call "now" off -x on').runs).toEqual([]);
    expect(parseSearchQuery('(call off)').runs).toEqual(['call off']);
  });

  it('never fails on what it cannot read', () => {
    expect(parseSearchQuery('"unterminated phrase')).toEqual({
      words: ['unterminated phrase'],
      phrases: ['unterminated phrase'],
      excluded: [],
      expandable: [],
      runs: [],
    });
    expect(parseSearchQuery(' - "" -- or ')).toEqual({
      words: ['-', 'or'],
      phrases: [],
      excluded: ['-'],
      expandable: ['or'],
      runs: [],
    });
    expect(parseSearchQuery('   ')).toEqual({ words: [], phrases: [], excluded: [], expandable: [], runs: [] });
  });
});
