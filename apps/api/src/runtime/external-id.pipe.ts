import { Injectable, type PipeTransform } from '@nestjs/common';
import type { DomainError } from '@app/contracts';

/** The runtime's own id of a call: its room's name at the provider (LiveKit's are at most 256 bytes). */
const EXTERNAL_ID = /^[A-Za-z0-9._:+-]{1,256}$/;

/**
 * Checks a path's external id as `ResourceIdPipe` checks a numeric one: an id the service could never have stored
 * answers the route's own "not found", like a call it does not have.
 */
@Injectable()
export class ExternalIdPipe implements PipeTransform<string, string> {
  constructor(private readonly notFound: () => DomainError) {}

  transform(value: string): string {
    if (!EXTERNAL_ID.test(value)) throw this.notFound();
    return value;
  }
}
