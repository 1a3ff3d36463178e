/**
 * The API reference's examples (docs/decisions/0049-first-hour.md): each merchant operation's
 * request, 200 answer and one error answer, captured from a real run of the service into
 * reference-examples.json by `npm run reference:capture` (test/api-reference-examples.test.ts,
 * which fails when an answer's shape drifts from its example). Data, not code: do not edit by hand.
 */
import examples from './reference-examples.json' with { type: 'json' };
import type { ExampleRequest } from './openapi-samples.js';

export interface CapturedExample {
  request: ExampleRequest;
  answer: unknown;
  error: { status: number; request: ExampleRequest; answer: unknown };
}

export const capturedExamples = examples as unknown as Record<string, CapturedExample>;
