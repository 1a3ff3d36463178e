// The verifier lives in the SDK package (sdk/src/verify-webhook.ts); this path is kept for the tests and
// for anyone who copied the import from an earlier guide.
export * from './src/verify-webhook.js';
