import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';

/**
 * A phone number in E.164 (`+14155550100`), the form carriers and the voice runtime use, or undefined when it is
 * not a valid number. National input is read in `country` (ISO 3166-1 alpha-2) when given.
 */
export function toE164(value: string, country?: string | null): string | undefined {
  const region = country && isSupportedCountry(country) ? (country as CountryCode) : undefined;
  const parsed = parsePhoneNumberFromString(value, region);
  return parsed?.isValid() ? parsed.number : undefined;
}

/** The country a valid E.164 number belongs to. */
export function countryOfNumber(e164: string): string | undefined {
  return parsePhoneNumberFromString(e164)?.country;
}

export const INVALID_PHONE_NUMBER = (attribute: string) => `The ${attribute} field must be a valid phone number.`;
