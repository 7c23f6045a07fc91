import { removeRepeatedPageLines } from './repeated-page-lines.filter';

const BODIES = ['Apples are red.', 'Bananas are yellow.', 'Cherries are dark.', 'Dates are sweet.'];

function page(number: number): string {
  return ['ACME Corp Confidential', '', BODIES[number - 1], '', `Page ${number} of 4`].join('\n');
}

describe('removeRepeatedPageLines', () => {
  it('removes running headers and numbered footers', () => {
    const pages = [1, 2, 3, 4].map(page);
    const cleaned = removeRepeatedPageLines(pages);
    expect(cleaned).toHaveLength(4);
    cleaned.forEach((text, index) => {
      expect(text).not.toContain('ACME Corp Confidential');
      expect(text).not.toMatch(/Page \d of 4/);
      expect(text).toContain(BODIES[index]);
    });
  });

  it('removes a repeated line only near the page edges, also on pages in the minority', () => {
    const pages = [
      'Header\nA1\nA2\nA3\nA4\nA5\nA6',
      'Header\nB1\nB2\nB3\nB4\nB5\nB6',
      'C1\nC2\nC3\nHeader\nC4\nC5\nC6',
      'Header\nD1\nD2\nD3\nD4\nD5\nD6',
    ];
    const cleaned = removeRepeatedPageLines(pages);
    expect(cleaned[0]).toBe('A1\nA2\nA3\nA4\nA5\nA6');
    expect(cleaned[2]).toBe('C1\nC2\nC3\nHeader\nC4\nC5\nC6');
  });

  it('keeps lines that differ only in numbers that do not count pages', () => {
    const pages = ['Revenue 120 EUR\nCosts 80 EUR', 'Revenue 95 EUR\nCosts 70 EUR', 'Revenue 130 EUR\nCosts 60 EUR'];
    expect(removeRepeatedPageLines(pages)).toEqual(pages);
  });

  it('removes numbered lines when a number grows from page to page', () => {
    const pages = ['- 7 -\none', 'two\n- 8 -', '- 9 -\nthree'];
    expect(removeRepeatedPageLines(pages)).toEqual(['one', 'two', 'three']);
  });

  it('keeps lines repeated on only half of the pages', () => {
    const pages = ['Draft\none', 'Draft\ntwo', 'three', 'four'];
    expect(removeRepeatedPageLines(pages)).toEqual(pages);
  });

  it('leaves documents with fewer than three pages alone', () => {
    const pages = ['Header\none', 'Header\ntwo'];
    expect(removeRepeatedPageLines(pages)).toEqual(pages);
  });
});
