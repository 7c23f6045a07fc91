import { Injectable } from '@nestjs/common';

/**
 * The time the dialer decides by (allowed hours, due retries). One injectable source, so tests can move it;
 * everywhere else it is the system clock.
 */
@Injectable()
export class Clock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  /** Makes `now()` read this instant from here on (and advance with real time). For tests. */
  set(instant: Date | string): void {
    this.offsetMs = new Date(instant).getTime() - Date.now();
  }
}
