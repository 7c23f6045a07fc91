import { Injectable, PipeTransform } from '@nestjs/common';
import type { DomainError } from '@app/contracts';

const MAX_ID = 2_147_483_647;

/**
 * Parses a path id. Anything that cannot be an id answers the resource's own "not found", so `/keys/abc`
 * and `/keys/999` look the same to the caller.
 */
@Injectable()
export class ResourceIdPipe implements PipeTransform<string, number> {
  constructor(private readonly notFound: () => DomainError) {}

  transform(value: string): number {
    const id = /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isInteger(id) || id < 1 || id > MAX_ID) throw this.notFound();
    return id;
  }
}
