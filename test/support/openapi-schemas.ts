import { Ajv, type ValidateFunction } from 'ajv';

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };

/**
 * Validators for the schemas the running service publishes at /openapi.json, so that
 * answers are checked against the document clients read, not against our own copy.
 */
export class PublishedSchemas {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });

  constructor(document: object) {
    this.ajv.addFormat('int32', {
      type: 'number',
      validate: (value: number) =>
        Number.isInteger(value) && value >= INT32.min && value <= INT32.max,
    });
    this.ajv.addFormat('int64', {
      type: 'number',
      validate: (value: number) => Number.isInteger(value),
    });
    this.ajv.addSchema(document, 'openapi.json');
  }

  static async fetch(baseUrl: string): Promise<PublishedSchemas> {
    const response = await fetch(`${baseUrl}/openapi.json`);
    return new PublishedSchemas((await response.json()) as object);
  }

  validator(name: string): ValidateFunction {
    return this.ajv.compile({
      $ref: `openapi.json#/components/schemas/${name}`,
    });
  }

  /** Asserts `body` matches the named schema, with ajv's complaint as the failure text. */
  expectMatches(name: string, body: unknown): void {
    const validate = this.validator(name);
    const valid = validate(body);
    expect(valid, this.ajv.errorsText(validate.errors)).toBe(true);
  }
}
