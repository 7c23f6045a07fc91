#!/usr/bin/env node
// The generated half of the SDK: TypeScript types of every path, operation and schema of openapi.json (the service's
// public OpenAPI document), by openapi-typescript at the version package.json pins. Reads the document from the file
// named (default: openapi.json) and prints the module, opening with the banner named (default: the SDK's);
// `npm run sdk:generate` at the repository's root writes the document and formats what this prints, and
// `npm run agent:generate` uses it for the example agent's types of the runtime API.
import { readFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';

const [
  documentPath = new URL('../openapi.json', import.meta.url).pathname,
  banner = '// Generated from openapi.json by `npm run sdk:generate` (openapi-typescript); do not edit.',
] = process.argv.slice(2);
const document = JSON.parse(readFileSync(documentPath, 'utf8'));

const ast = await openapiTS(document, {
  // A property with a default may be left out of a request (the API fills it in); generated as required, every
  // create would have to send what the API defaults.
  defaultNonNullable: false,
  // A file field (`format: binary`) is what a client holds (a Blob, or a File with its name), not the string the
  // document's JSON Schema would otherwise give: the client's body serializer sends such a body as multipart.
  transform: (schema) => (schema.format === 'binary' ? ts.factory.createTypeReferenceNode('Blob') : undefined),
});
process.stdout.write(`${banner}\n\n${astToString(ast)}`);
