import { ArgumentMetadata, Injectable, ValidationPipe } from '@nestjs/common';
import { Errors, ValidationFailed, dataKeyFields, flattenValidationErrors, normaliseInput } from '@app/contracts';

/**
 * Validates and transforms request DTOs. Unknown fields are stripped (never stored); failures become
 * Laravel's validation shape. A body that is not a JSON object is refused before validation.
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
    const normalised = normaliseInput(value, dataKeyFields(metadata.metatype));
    if (normalised.problems.length > 0) {
      const errors: Record<string, string[]> = {};
      for (const { path, message } of normalised.problems) (errors[path] ??= []).push(message);
      throw new ValidationFailed(errors);
    }
    return super.transform(normalised.value, metadata);
  }
}
