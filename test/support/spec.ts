import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parse } from 'yaml';

/** Where the team's interface specification lives, beside this repository. */
export const SHARED_SPEC_DIR = resolve('../shared/spec');

/**
 * The contract's OpenAPI rendering, as pinned in this repository (test/contract): a clone
 * anywhere (CI's included) has it. test/repository/contract-pin.repository-spec.ts checks
 * the pin is the shared file.
 */
export const SPEC_PATH = resolve(
  process.env.PLANT_STORE_SPEC ?? 'test/contract/plant-store.openapi.yaml',
);

export async function readSpec(): Promise<OpenApiDocument> {
  return parse(await readFile(SPEC_PATH, 'utf8')) as OpenApiDocument;
}

export interface SchemaObject {
  type?: string;
  format?: string;
  required?: string[];
  properties?: Record<string, SchemaObject>;
  allOf?: SchemaObject[];
  $ref?: string;
  [key: string]: unknown;
}

export interface OpenApiDocument {
  info: { title: string; version: string; license?: { name: string } };
  paths: Record<string, Record<string, Record<string, unknown>>>;
  security?: Record<string, string[]>[];
  components: {
    schemas: Record<string, SchemaObject>;
    securitySchemes: Record<string, Record<string, unknown>>;
  };
}

/**
 * A schema reduced to what the contract fixes (types, formats, required fields),
 * references and allOf resolved, so two renderings of one contract compare equal.
 */
export function contractOf(
  document: OpenApiDocument,
  schema: SchemaObject,
): SchemaObject {
  if (schema.$ref !== undefined) {
    const name = schema.$ref.replace('#/components/schemas/', '');
    return contractOf(document, document.components.schemas[name]);
  }
  if (schema.allOf !== undefined) {
    const parts = schema.allOf.map((part) => contractOf(document, part));
    return {
      type: 'object',
      required: parts.flatMap((part) => part.required ?? []).sort(),
      properties: Object.assign(
        {},
        ...parts.map((part) => part.properties ?? {}),
      ) as Record<string, SchemaObject>,
    };
  }
  const reduced: SchemaObject = {};
  if (schema.type !== undefined) reduced.type = schema.type;
  if (schema.format !== undefined) reduced.format = schema.format;
  if (schema.type === 'object') {
    reduced.required = [...(schema.required ?? [])].sort();
    reduced.properties = Object.fromEntries(
      Object.entries(schema.properties ?? {}).map(([key, value]) => [
        key,
        contractOf(document, value),
      ]),
    );
  }
  return reduced;
}
