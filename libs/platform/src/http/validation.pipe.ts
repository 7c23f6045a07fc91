import { ArgumentMetadata, Injectable, ValidationPipe } from '@nestjs/common';
import {
  Errors,
  ValidationFailed,
  dataKeyFields,
  flattenValidationErrors,
  listsOverCap,
  normaliseInput,
} from '@app/contracts';

/**
 * Validates and transforms request DTOs. Unknown fields are stripped (never stored); failures become
 * Laravel's validation shape. A body that is not a JSON object, and a capped list over its cap, are refused before
 * validation.
 *
 * Path parameters pass through untouched: converting them here would turn `0xde` or `+1` into a number before
 * the route's `ResourceIdPipe` could refuse it.
 */
@Injectable()
export class ApiValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      transform: true,
      forbidUnknownValues: false,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new ValidationFailed(flattenValidationErrors(errors)),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type !== 'body' && metadata.type !== 'query') return value;
    if (!metadata.metatype || !this.toValidate(metadata)) return value;
    if (metadata.type === 'body') {
      if (value === undefined || value === null) value = {};
      if (typeof value !== 'object' || Array.isArray(value)) throw Errors.bodyNotObject();
    }
    // A list over its cap is refused for its size before its items are walked, transformed and validated: ten
    // thousand events took 0.9-1.7 s to refuse item by item, 20-70 ms (mostly reading the body) this way.
    const overCap = typeof value === 'object' && value !== null ? listsOverCap(metadata.metatype, value) : undefined;
    if (overCap) throw new ValidationFailed(overCap);
    const normalised = normaliseInput(value, dataKeyFields(metadata.metatype));
    if (normalised.problems.length > 0) {
      const errors: Record<string, string[]> = {};
      for (const { path, message } of normalised.problems) (errors[path] ??= []).push(message);
      throw new ValidationFailed(errors);
    }
    return super.transform(normalised.value, metadata);
  }
}
