/**
 * The OpenAPI description of one DTO property, in the form `@nestjs/swagger` reads from a class's static
 * `_OPENAPI_METADATA_FACTORY` (what its CLI plugin generates), so that Swagger documents our DTOs while
 * `@nestjs/swagger` stays out of our dependencies.
 */
export type OpenApiPropertyMetadata = Readonly<Record<string, unknown>> & { required: boolean };

/** The metadata of a DTO class by property name. */
export type OpenApiMetadata = Readonly<Record<string, OpenApiPropertyMetadata>>;

/**
 * Where `@nestjs/swagger` reads a class's own schema-level fields (what its `@ApiSchema()` decorator
 * writes); the fields other than `name` are copied onto the schema object. Used, like
 * `_OPENAPI_METADATA_FACTORY`, so that our DTOs document themselves without depending on `@nestjs/swagger`.
 */
export const OPENAPI_SCHEMA_METADATA = 'swagger/apiSchema';

/** Schema-level fields of a DTO: a description, and `additionalProperties: false` (nothing else accepted). */
export interface OpenApiSchemaMetadata {
  readonly description: string;
  readonly additionalProperties: false;
}

/** The refused fields of a table for a description, grouped by meaning: `` `cc` (CC recipients), `raw`, `mime` (raw MIME) ``. */
export function listRefused(table: Readonly<Record<string, string>>): string {
  const byMeaning = new Map<string, string[]>();
  for (const [name, what] of Object.entries(table))
    byMeaning.set(what, [...(byMeaning.get(what) ?? []), name]);
  return [...byMeaning]
    .map(([what, names]) => `${names.map((n) => `\`${n}\``).join(', ')} (${what})`)
    .join(', ');
}

/**
 * A DTO's schema-level metadata: what it is, then the fields the service does not support, which are
 * refused with 400 by name (never dropped) and therefore not listed as properties at all.
 */
export function closedSchema(what: string, ...refused: string[]): OpenApiSchemaMetadata {
  return {
    description: `${what} No other properties are accepted: ${refused.join('; ')}. A body with any of them, or any other unknown property, is refused with 400 naming it, never silently dropped.`,
    additionalProperties: false,
  };
}
