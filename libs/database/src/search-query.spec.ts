import { parseSearchQuery } from './search-query';

describe('parseSearchQuery', () => {
  it('reads words, required phrases and exclusions as typed into a search box', () => {
    expect(parseSearchQuery('opening hours "nine to five" -closed -"bank holiday" OR friday')).toEqual({
      words: ['opening', 'hours', 'friday', 'nine to five'],
      phrases: ['nine to five'],
      excluded: ['closed', 'bank holiday'],
    });
  });

  it('never fails on what it cannot read', () => {
    expect(parseSearchQuery('"unterminated phrase')).toEqual({
      words: ['unterminated phrase'],
      phrases: ['unterminated phrase'],
      excluded: [],
    });
    expect(parseSearchQuery(' - "" -- or ')).toEqual({ words: ['-', 'or'], phrases: [], excluded: ['-'] });
    expect(parseSearchQuery('   ')).toEqual({ words: [], phrases: [], excluded: [] });
  });
});
