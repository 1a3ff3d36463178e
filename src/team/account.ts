import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import { hashKey } from '../core/merchant-context.js';
import { DomainError, invalidField } from '../core/errors.js';
import * as queries from './queries.js';
import type { Enrolment, TwoFactor } from './two-factor.js';

/** The part of the team service that account actions use (service.ts passes its own). */
export interface AccountDeps {
  db: Db;
  clock: Clock;
  twoFactor: TwoFactor;
  audit(actor: AccountActor, action: string, objectId: string | null, source?: Queryable): Promise<void>;
  openSession(memberId: string, clientAddress: string): Promise<string>;
}

interface AccountActor {
  merchantId: string;
  memberId: string;
  mode: 'test' | 'live';
  clientAddress: string;
}

/**
 * Two-factor sign-in of a member (enrol, confirm, disable, the code step of sign-in), the team's
 * requirement of it, and ownership transfer (issue 11, docs/dashboard.md#roles).
 */
export function accountActions({ db, clock, twoFactor, audit, openSession }: AccountDeps) {
  async function self(actor: AccountActor): Promise<queries.MemberRow> {
    const member = await queries.selectMember(db, actor.merchantId, actor.memberId);
    if (!member) throw new DomainError('resource_missing', 'No such team member', { param: 'id' });
    return member;
  }

  return {
    /** The code step of sign-in: a usable challenge (the password was right) and a right code open a session. */
    async signInWithCode(
      challenge: string,
      code: string,
      clientAddress: string,
    ): Promise<{ ok: true; sessionToken: string } | { ok: false; reason: 'expired' | 'wrong' | 'limited' }> {
      const member = await twoFactor.challengeMember(challenge);
      if (!member) return { ok: false, reason: 'expired' };
      const result = await twoFactor.check(member, member.totp_secret_encrypted, code);
      if (result !== 'ok') return { ok: false, reason: result };
      if (!(await queries.markLinkUsed(db, hashKey(challenge), clock.now()))) return { ok: false, reason: 'expired' };
      const sessionToken = await openSession(member.id, clientAddress);
      const actor = { merchantId: member.merchant_id, memberId: member.id, mode: 'test' as const, clientAddress };
      await audit(actor, 'team.signed_in', member.id);
      return { ok: true, sessionToken };
    },

    /** Whether the member has two-factor on, and the secret being enrolled if any. */
    async twoFactorState(actor: AccountActor): Promise<{ enrolled: boolean; required: boolean }> {
      const member = await self(actor);
      return {
        enrolled: member.totp_secret_encrypted !== null,
        required: await queries.selectTeamTotpRequired(db, actor.merchantId),
      };
    },

    async startTwoFactor(actor: AccountActor): Promise<Enrolment> {
      const member = await self(actor);
      if (member.totp_secret_encrypted)
        throw invalidField('code', 'Two-factor sign-in is on already: turn it off first to use another app', 'state');
      return twoFactor.startEnrolment(member);
    },

    async confirmTwoFactor(actor: AccountActor, code: string): Promise<void> {
      await twoFactor.confirmEnrolment(await self(actor), code);
      await audit(actor, 'team.two_factor_enabled', actor.memberId);
    },

    async disableTwoFactor(actor: AccountActor, code: string): Promise<void> {
      if (await queries.selectTeamTotpRequired(db, actor.merchantId))
        throw invalidField('code', 'Your team requires two-factor sign-in: it cannot be turned off', 'required');
      await twoFactor.disable(await self(actor), code);
      await audit(actor, 'team.two_factor_disabled', actor.memberId);
    },

    /** The Owner requires two-factor for the whole team; the Owner must have it on first. */
    async requireTwoFactor(actor: AccountActor, required: boolean): Promise<void> {
      if (required && (await self(actor)).totp_secret_encrypted === null)
        throw invalidField('required', 'Turn on two-factor sign-in for yourself first', 'state');
      await db.transaction(async (tx) => {
        await queries.updateTeamTotpRequired(tx, actor.merchantId, required);
        await audit(actor, `team.two_factor_required:${required ? 'on' : 'off'}`, actor.merchantId, tx);
      });
    },

    /**
     * The Owner hands the merchant to another member, who must have set a password; the old Owner
     * becomes Administrator. Both updates are conditional and in one transaction with the audit row.
     */
    async transferOwnership(actor: AccountActor, memberId: string): Promise<void> {
      if (memberId === actor.memberId)
        throw invalidField('memberId', 'memberId must be another member than yourself', 'other');
      const moved = await db.transaction(async (tx) => {
        if (!(await queries.promoteToOwner(tx, actor.merchantId, memberId, clock.now()))) return false;
        if (!(await queries.demoteOwner(tx, actor.merchantId, actor.memberId, clock.now())))
          throw new DomainError('permission_denied', 'Only the Owner can transfer ownership');
        await audit(actor, 'team.ownership_transferred', memberId, tx);
        return true;
      });
      if (!moved)
        throw invalidField('memberId', 'memberId must be a member of your team who has set a password', 'member');
    },
  };
}
