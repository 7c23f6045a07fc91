const examples = new Map<string, object>();

/**
 * The whole body Swagger UI's "Try it out" offers for this request, where its required fields alone are not a
 * request the API accepts (a field required unless another is sent, an id that must name an outbound assistant) or
 * say too little of what it is for. Ids are the first a fresh install hands out, in the order the document lists
 * its operations; test/openapi-examples.e2e-spec.ts sends every example so to a fresh install.
 */
export function RequestExample(example: object): ClassDecorator {
  return (target) => {
    examples.set(target.name, example);
  };
}

/** The example `RequestExample` gave the request class of this name (the document's schema name), if any. */
export function requestExampleOf(schemaName: string): object | undefined {
  return examples.get(schemaName);
}
