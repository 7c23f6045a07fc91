/** The part of a campaign that says when it may call. */
export interface DialWindow {
  timezone: string;
  /** `HH:MM`, or null for no limit. */
  allowed_hours_start_time: string | null;
  allowed_hours_end_time: string | null;
  /** Lower-case English weekday names. */
  allowed_days: string[];
}

const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));

/**
 * Whether a campaign may call at this instant: on one of its days, from its start time up to (not including) its
 * end time, both read on the wall clock of its timezone, so a daylight-saving change moves the window with the
 * local clock. An end before the start is a window across midnight (22:00-06:00), which belongs to the day it
 * starts on.
 */
export function isWithinDialWindow(window: DialWindow, at: Date): boolean {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: window.timezone,
      weekday: 'long',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(at)
      .map((part) => [part.type, part.value]),
  );
  const day = parts.weekday.toLowerCase();
  const minute = Number(parts.hour) * 60 + Number(parts.minute);
  const start = window.allowed_hours_start_time === null ? 0 : minutesOf(window.allowed_hours_start_time);
  const end = window.allowed_hours_end_time === null ? 24 * 60 : minutesOf(window.allowed_hours_end_time);
  if (start <= end) return window.allowed_days.includes(day) && minute >= start && minute < end;
  // Across midnight: the evening part is on an allowed day, the morning part follows an allowed day.
  if (minute >= start) return window.allowed_days.includes(day);
  if (minute < end) return window.allowed_days.includes(previousDay(day));
  return false;
}

const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const previousDay = (day: string) => DAYS[(DAYS.indexOf(day) + 6) % 7];
