import { ArgumentMetadata, Injectable, ValidationPipe } from '@nestjs/common';
import { Errors, ValidationFailed, flattenValidationErrors } from '@app/contracts';

/**
 * Validates and transforms request DTOs. Unknown fields are stripped (never stored); failures become
 * Laravel's validation shape. A body that is not a JSON object is refused before validation.
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
    if (metadata.type === 'body' && metadata.metatype && this.toValidate(metadata)) {
      if (value === undefined || value === null) value = {};
      if (typeof value !== 'object' || Array.isArray(value)) throw Errors.bodyNotObject();
    }
    return super.transform(value, metadata);
  }
}
