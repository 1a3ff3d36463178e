import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { Clock } from '../clock.js';
import type { Db } from '../db/db.js';
import { hashKey } from '../core/merchant-context.js';
import { DomainError, invalidField } from '../core/errors.js';
import type { Vault } from '../vault/vault.js';
import * as queries from './queries.js';
import { teamMemberContext } from '../vault/secrets-at-rest.js';

/** RFC 6238 as authenticator apps expect it by default: SHA-1, 6 digits, 30 seconds. */
const period = 30;
const digits = 6;
/** A code of the step before or after is accepted too: phones' clocks drift. */
const window = 1;
/** Wrong codes are limited like wrong passwords: this many per member within the sign-in window. */
export const maxCodeFailures = 5;
/** How long the password step is good for while the code is asked. */
export const challengeLifetimeMs = 5 * 60 * 1000;

export interface Enrolment {
  /** Base32, to type into an app by hand; shown once, when enrolment starts. */
  secret: string;
  /** otpauth:// URI with the same secret, for apps that take a link. */
  uri: string;
}

export type CodeCheck = 'ok' | 'wrong' | 'limited';

export interface TwoFactorDeps {
  db: Db;
  clock: Clock;
  vault: Pick<Vault, 'encrypt' | 'decrypt'>;
  signInWindowMs: number;
}

const totpOf = (secret: string, label: string) =>
  new TOTP({ issuer: 'Tessera', label, algorithm: 'SHA1', digits, period, secret: Secret.fromBase32(secret) });

/**
 * Two-factor sign-in with authenticator apps (issue 11): enrolment, codes checked once each and
 * rate limited per member, secrets encrypted by the vault with the member id as context.
 */
export function createTwoFactor({ db, clock, vault, signInWindowMs }: TwoFactorDeps) {
  const subject = (memberId: string) => `code:${memberId}`;
  const context = teamMemberContext;

  /**
   * Checks a code against a secret; a valid code is accepted once only (its time step is kept,
   * with a conditional update so that two requests with the same code cannot both pass).
   */
  async function check(member: queries.MemberRow, encrypted: string | null, code: string): Promise<CodeCheck> {
    const now = clock.now();
    // Counted before the code is checked, as sign-in is (docs/operations.md#topology): codes sent at once cannot
    // all pass the count. The attempt stays a failure (refused ones too) unless the code is right.
    const [failures] = await queries.reserveSignInAttempt(
      db,
      randomBytes(12).toString('hex'),
      [subject(member.id)],
      now,
      new Date(now.getTime() - signInWindowMs),
    );
    if (failures! > maxCodeFailures) return 'limited';
    const token = code.replace(/\s/g, '');
    let step: number | null = null;
    if (encrypted && /^\d{6}$/.test(token)) {
      const secret = await vault.decrypt(encrypted, context(member.id));
      const timestamp = clock.now().getTime();
      const delta = totpOf(secret, member.email).validate({ token, timestamp, window });
      if (delta !== null) step = Math.floor(timestamp / 1000 / period) + delta;
    }
    if (step === null || !(await queries.useTotpStep(db, member.id, step))) return 'wrong';
    await queries.deleteSignInFailures(db, subject(member.id));
    return 'ok';
  }

  const refuse = (result: CodeCheck) => {
    if (result === 'limited')
      throw new DomainError(
        'rate_limited',
        `Too many wrong codes (${maxCodeFailures}): try again in ${signInWindowMs / 60_000} minutes.`,
        { param: 'code' },
      );
    throw invalidField('code', 'code is not right: type the 6 digits your app shows now', 'totp');
  };

  return {
    check,

    /** A new secret to enrol (replacing one not confirmed yet); two-factor is not on until confirmed. */
    async startEnrolment(member: queries.MemberRow): Promise<Enrolment> {
      const secret = new Secret({ size: 20 }).base32;
      await queries.updateTotpPending(db, member.id, vault.encrypt(secret, context(member.id)), clock.now());
      return { secret, uri: totpOf(secret, member.email).toString() };
    },

    /** Turns two-factor on when `code` matches the secret being enrolled. */
    async confirmEnrolment(member: queries.MemberRow, code: string): Promise<void> {
      if (!member.totp_pending_encrypted)
        throw invalidField('code', 'Start the set-up again: no secret is waiting for a code', 'state');
      const result = await check(member, member.totp_pending_encrypted, code);
      if (result !== 'ok') refuse(result);
      await queries.confirmTotp(db, member.id, member.totp_pending_encrypted, clock.now());
    },

    /** Turns two-factor off with a current code. */
    async disable(member: queries.MemberRow, code: string): Promise<void> {
      const result = await check(member, member.totp_secret_encrypted, code);
      if (result !== 'ok') refuse(result);
      await queries.clearTotp(db, member.id, clock.now());
    },

    /** The member a usable sign-in challenge is for, or undefined. */
    async challengeMember(challenge: string): Promise<queries.MemberRow | undefined> {
      const link = await queries.selectUsableLink(db, hashKey(challenge), ['second_factor'], clock.now());
      return link ? queries.selectMemberById(db, link.member_id) : undefined;
    },
  };
}

export type TwoFactor = ReturnType<typeof createTwoFactor>;
