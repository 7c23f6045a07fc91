import { isWithinDialWindow } from './dial-window';

const weekdays = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'];

describe('isWithinDialWindow', () => {
  const nineToFive = {
    timezone: 'Europe/Berlin',
    allowed_hours_start_time: '09:00',
    allowed_hours_end_time: '17:00',
    allowed_days: weekdays,
  };

  it('reads the hours on the campaign’s wall clock, start included and end excluded', () => {
    // Monday 2026-11-23: Berlin is UTC+1.
    expect(isWithinDialWindow(nineToFive, new Date('2026-11-23T07:59:00Z'))).toBe(false);
    expect(isWithinDialWindow(nineToFive, new Date('2026-11-23T08:00:00Z'))).toBe(true);
    expect(isWithinDialWindow(nineToFive, new Date('2026-11-23T15:59:00Z'))).toBe(true);
    expect(isWithinDialWindow(nineToFive, new Date('2026-11-23T16:00:00Z'))).toBe(false);
  });

  it('skips days that are not allowed, by the local date', () => {
    // Saturday 10:00 in Berlin; and Friday 23:30 UTC, which is already Saturday in Berlin.
    expect(isWithinDialWindow(nineToFive, new Date('2026-11-28T09:00:00Z'))).toBe(false);
    expect(
      isWithinDialWindow({ ...nineToFive, allowed_hours_end_time: '23:59' }, new Date('2026-11-27T23:30:00Z')),
    ).toBe(false);
  });

  it('moves with the local clock across a daylight-saving change', () => {
    const newYork = { ...nineToFive, timezone: 'America/New_York', allowed_days: [...weekdays, 'saturday', 'sunday'] };
    // 13:30 UTC is 08:30 EST on Saturday 7 March 2026, and 09:30 EDT on Sunday 8 March, after the change.
    expect(isWithinDialWindow(newYork, new Date('2026-03-07T13:30:00Z'))).toBe(false);
    expect(isWithinDialWindow(newYork, new Date('2026-03-08T13:30:00Z'))).toBe(true);
    // 21:30 UTC is 16:30 EST before, and 17:30 EDT after.
    expect(isWithinDialWindow(newYork, new Date('2026-03-07T21:30:00Z'))).toBe(true);
    expect(isWithinDialWindow(newYork, new Date('2026-03-08T21:30:00Z'))).toBe(false);
  });

  it('treats an end before the start as a window across midnight', () => {
    const nights = {
      timezone: 'UTC',
      allowed_hours_start_time: '22:00',
      allowed_hours_end_time: '06:00',
      allowed_days: ['friday'],
    };
    expect(isWithinDialWindow(nights, new Date('2026-11-27T23:00:00Z'))).toBe(true); // Friday night
    expect(isWithinDialWindow(nights, new Date('2026-11-28T05:00:00Z'))).toBe(true); // Saturday morning, after Friday
    expect(isWithinDialWindow(nights, new Date('2026-11-28T23:00:00Z'))).toBe(false); // Saturday night
    expect(isWithinDialWindow(nights, new Date('2026-11-27T12:00:00Z'))).toBe(false);
  });

  it('calls at any time of an allowed day when no hours are set', () => {
    const always = {
      timezone: 'UTC',
      allowed_hours_start_time: null,
      allowed_hours_end_time: null,
      allowed_days: weekdays,
    };
    expect(isWithinDialWindow(always, new Date('2026-11-23T00:00:00Z'))).toBe(true);
    expect(isWithinDialWindow(always, new Date('2026-11-22T12:00:00Z'))).toBe(false); // Sunday
  });
});
