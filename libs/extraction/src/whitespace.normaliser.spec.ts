import { normaliseWhitespace } from './whitespace.normaliser';

describe('normaliseWhitespace', () => {
  it('unifies newlines, spaces and blank lines', () => {
    const input = '  Title\r\n\r\n\r\n\r\nFirst\u00a0line\t\twith   gaps  \rSecond\u2003line\n\n\n\nEnd  ';
    expect(normaliseWhitespace(input)).toBe('Title\n\nFirst line with gaps\nSecond line\n\nEnd');
  });

  it('strips control and zero-width characters but keeps tabs as spaces and newlines', () => {
    expect(normaliseWhitespace('a\u0000b\u0007c\u200bd\ufeff\te\u0085f\ng')).toBe('abcd ef\ng');
  });

  it('treats form feeds as paragraph breaks', () => {
    expect(normaliseWhitespace('page one\fpage two')).toBe('page one\n\npage two');
  });

  it('re-joins lowercase words hyphenated across a line break', () => {
    expect(normaliseWhitespace('an inter-\nnational treaty')).toBe('an international treaty');
    expect(normaliseWhitespace('an inter-  \n  national treaty')).toBe('an international treaty');
    expect(normaliseWhitespace('soft\u00ad\nhyphen')).toBe('softhyphen');
  });

  it('keeps hyphens that are not word breaks', () => {
    expect(normaliseWhitespace('Anglo-\nSaxon')).toBe('Anglo-\nSaxon');
    expect(normaliseWhitespace('items:\n- first\n- second')).toBe('items:\n- first\n- second');
    expect(normaliseWhitespace('end of para-\n\nnext')).toBe('end of para-\n\nnext');
  });

  it('returns an empty string for whitespace only', () => {
    expect(normaliseWhitespace(' \n\u00a0\t\r\n ')).toBe('');
  });
});
