import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';

/** What a number reads as: its E.164 form, country and national number when it is a valid number. */
interface Reading {
  valid: boolean;
  number?: string;
  country?: string;
  nationalNumber?: string;
}

/**
 * Readings of the numbers read last. Reading a number against the full metadata takes tens of microseconds, and the
 * same numbers come back on every call (an assistant's own number on each of its calls, a lead's on each retry);
 * a reading never changes. Emptied when full, which costs less on every call than ordering by use; nothing longer
 * than any phone number is kept.
 */
const readings = new Map<string, Reading>();
const MOST_KEPT = 10_000;
const LONGEST_KEPT = 64;

function read(value: string, region?: CountryCode): Reading {
  const key = `${region ?? ''}:${value}`;
  const kept = readings.get(key);
  if (kept) return kept;
  const parsed = parsePhoneNumberFromString(value, region);
  const reading: Reading = parsed?.isValid()
    ? { valid: true, number: parsed.number, country: parsed.country, nationalNumber: parsed.nationalNumber }
    : { valid: false, country: parsed?.country };
  if (value.length <= LONGEST_KEPT) {
    if (readings.size >= MOST_KEPT) readings.clear();
    readings.set(key, reading);
  }
  return reading;
}

/**
 * A phone number in E.164 (`+14155550100`), the form carriers and the voice runtime use, or undefined when it is
 * not a valid number. National input is read in `country` (ISO 3166-1 alpha-2) when given.
 */
export function toE164(value: string, country?: string | null): string | undefined {
  const region = country && isSupportedCountry(country) ? (country as CountryCode) : undefined;
  return read(value, region).number;
}

/** The country a valid E.164 number belongs to. */
export function countryOfNumber(e164: string): string | undefined {
  return read(e164).country;
}

export const INVALID_PHONE_NUMBER = (attribute: string) => `The ${attribute} field must be a valid phone number.`;

/**
 * A number the voice runtime reports (a caller's, the one dialled), in E.164 when it reads as a valid number:
 * international as written (`+1 (415) 555-0142`), or in `country` (`4155550142`, `14155550142` for `US`); anything
 * else as sent (a SIP extension, `anonymous`, a SIP URI), since there is no number to normalise.
 */
export function reportedNumber(value: string, country?: string | null): string {
  return toE164(value, country) ?? value;
}

/** The shortest national significant number of any country (libphonenumber's metadata: Niue, Saint Helena, ...). */
const SHORTEST_NATIONAL_NUMBER = 4;

/**
 * The national significant numbers (`national_phone_number` in the database) a stored number could have for
 * `dialled` to name it: the national number of a number written internationally; else every tail of the digits
 * dialled, since a carrier's national form is the national number behind a trunk prefix (`0`, `1`) or a calling
 * code without its `+`; an extension is its own. `dialledNames` then tells which candidates it names.
 */
export function nationalNumberCandidates(dialled: string): string[] {
  const international = read(dialled);
  if (international.valid) return [international.nationalNumber!];
  const written = dialled.trim();
  const digits = written.replace(/[\s().-]/g, '');
  const tails = /^\d+$/.test(digits)
    ? Array.from({ length: Math.max(0, digits.length - SHORTEST_NATIONAL_NUMBER + 1) }, (_, start) =>
        digits.slice(start),
      )
    : [];
  return [...new Set([written, ...tails])];
}

/**
 * Whether `dialled` names the stored number `stored`: for a number in E.164, when it reads as that number in the
 * number's own country (`country`, else the country the number belongs to); an extension, when written as stored.
 */
export function dialledNames(dialled: string, stored: string, country: string | null): boolean {
  if (!stored.startsWith('+')) return dialled.trim() === stored;
  return toE164(dialled, country ?? countryOfNumber(stored)) === stored;
}
