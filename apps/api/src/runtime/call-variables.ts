/**
 * The variables of a call as its assistant sees them: the assistant's, then the lead's, then the call's own, a
 * later one winning. Keys that could reach an object's prototype are never copied.
 */
export function mergeCallVariables(...layers: (Record<string, unknown> | null | undefined)[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer ?? {})) {
      if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
      merged[key] = value;
    }
  }
  return merged;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

/**
 * `{{name}}` replaced by that variable, once, left to right: a value is inserted as text and never read again for
 * placeholders, so a caller's name of `{{secret}}` stays those characters. A name no variable has stays as written;
 * a null value becomes empty text.
 */
export function fillVariables(text: string | null, variables: Record<string, unknown>): string | null {
  if (text === null) return null;
  return text.replace(PLACEHOLDER, (placeholder, name: string) => {
    if (!Object.hasOwn(variables, name)) return placeholder;
    const value = variables[name];
    if (value === null || value === undefined) return '';
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  });
}
