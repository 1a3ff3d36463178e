import { randomBytes } from 'node:crypto';
import type { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';

/** A one-time link's or a session's token: 32 random bytes (only its hash is stored). */
export const secretToken = () => randomBytes(32).toString('base64url');

/**
 * Argon2 (a native module) is loaded with the first password checked or set, not at every start
 * (docs/performance.md#test-suite-time, "What a start loads"). With it comes the hash that verify() runs against
 * when the e-mail is unknown, so that the answer takes as long: a sign-in waits for both before it
 * looks the member up, so the first one of a process is as slow for an unknown e-mail as for a known.
 */
let passwordHashing:
  Promise<{ hash: typeof argon2Hash; verify: typeof argon2Verify; unknownMemberHash: string }> | undefined;
export const passwords = () =>
  (passwordHashing ??= import('@node-rs/argon2').then(async ({ hash, verify }) => ({
    hash,
    verify,
    unknownMemberHash: await hash(randomBytes(16).toString('hex')),
  })));
