import { dialledNames, nationalNumberCandidates, reportedNumber } from './phone-numbers';

describe('the numbers the voice runtime reports', () => {
  it.each([
    ['+1 (415) 555-0142', null, '+14155550142'],
    ['(415) 555-0142', 'US', '+14155550142'],
    ['14155550142', 'US', '+14155550142'],
    ['02071838750', 'GB', '+442071838750'],
    ['+44 20 7183 8750', 'US', '+442071838750'],
    ['4155550142', null, '4155550142'],
    ['1001', 'US', '1001'],
    ['anonymous', 'US', 'anonymous'],
    ['sip:alice@example.com', null, 'sip:alice@example.com'],
  ])('keeps %p (in %p) as %p', (value, country, stored) => {
    expect(reportedNumber(value, country)).toBe(stored);
  });
});

describe('which stored number a dialled form names', () => {
  const names = (dialled: string, stored: string, country: string | null) =>
    nationalNumberCandidates(dialled).includes(nationalOf(stored)) && dialledNames(dialled, stored, country);
  /** What `national_phone_number` stores for these numbers. */
  const nationalOf = (stored: string) =>
    ({ '+14155550142': '4155550142', '+442071838750': '2071838750', '+3584155550142': '4155550142', '1001': '1001' })[
      stored
    ]!;

  it.each([
    ['+14155550142', '+14155550142', 'US'],
    ['+1 (415) 555-0142', '+14155550142', 'US'],
    ['14155550142', '+14155550142', 'US'],
    ['4155550142', '+14155550142', 'US'],
    ['(415) 555-0142', '+14155550142', null],
    ['02071838750', '+442071838750', 'GB'],
    ['442071838750', '+442071838750', 'GB'],
    ['4155550142', '+3584155550142', 'FI'],
    ['1001', '1001', null],
  ])('%p names %p', (dialled, stored, country) => {
    expect(names(dialled, stored, country)).toBe(true);
  });

  it.each([
    ['+14155550142', '+3584155550142', 'FI'],
    ['4155550143', '+14155550142', 'US'],
    ['2071838750', '+14155550142', 'US'],
    ['01001', '1001', null],
    ['anonymous', '+14155550142', 'US'],
  ])('%p does not name %p', (dialled, stored, country) => {
    expect(names(dialled, stored, country)).toBe(false);
  });

  it('looks a number written internationally up by its own national number alone', () => {
    expect(nationalNumberCandidates('+1 (415) 555-0142')).toEqual(['4155550142']);
    expect(nationalNumberCandidates('14155550142')).toEqual(
      expect.arrayContaining(['14155550142', '4155550142', '0142']),
    );
    expect(nationalNumberCandidates('14155550142')).not.toContain('142');
  });
});
