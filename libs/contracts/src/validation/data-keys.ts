/** What a key naming an object's internals is refused with, in a field whose keys are data: its path in, the message out. */
export type DataKeyMessage = (path: string) => string;

const DATA_KEY_FIELDS = Symbol('dataKeyFields');

/**
 * Marks an object field whose keys are the client's data (a tool's arguments), not field names: there a key naming an
 * object's internals, dropped everywhere else, is refused on its path (`arguments.__proto__`) with `message`, as any
 * other key the field does not take would be.
 */
export function markDataKeys(target: object, property: string, message: DataKeyMessage): void {
  const owner = target as { [DATA_KEY_FIELDS]?: Map<string, DataKeyMessage> };
  // A subclass starts from its parent's fields, on a map of its own.
  const fields = new Map(owner[DATA_KEY_FIELDS]);
  fields.set(property, message);
  Object.defineProperty(owner, DATA_KEY_FIELDS, { value: fields, configurable: true });
}

/** The fields of a request class marked with `Rule.DataKeys`, by name. */
export function dataKeyFields(type: unknown): ReadonlyMap<string, DataKeyMessage> {
  const prototype =
    typeof type === 'function' ? (type.prototype as { [DATA_KEY_FIELDS]?: Map<string, DataKeyMessage> }) : undefined;
  return prototype?.[DATA_KEY_FIELDS] ?? new Map();
}
