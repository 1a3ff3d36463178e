/**
 * A merchant's fee schedule and what it charges (docs/balances.md, Fees): a percentage in basis
 * points of the amount plus a fixed part per currency. Pure arithmetic on bigint minor units.
 */

export interface FeeSchedule {
  percentBasisPoints: number;
  /** The fixed part per currency (minor units); a currency not listed pays `defaultFixed`. */
  fixed: Readonly<Record<string, number>>;
}

/** The sandbox's schedule, and every merchant's until the operator sets one: 2.9 % + 30. */
export const defaultPercentBasisPoints = 290;
export const defaultFixed = 30;

export interface FeeLine {
  /** `dispute_fee`: a chargeback's fee (docs/disputes.md, Money). */
  type: 'tessera_fee' | 'processor_fee' | 'dispute_fee';
  amount: bigint;
  description: string;
}

/**
 * `amount × basis points / 10 000`, rounded half up to the minor unit (0.5 cent and more is a
 * cent), then the fixed part: 2.9 % of 1999 is 57.971, so 58 + 30 = 88.
 */
export function percentPart(amount: bigint, basisPoints: number): bigint {
  return (amount * BigInt(basisPoints) * 2n + 10_000n) / 20_000n;
}

export function fixedPart(schedule: FeeSchedule, currency: string): bigint {
  return BigInt(schedule.fixed[currency] ?? defaultFixed);
}

/** The fee of a payment of `amount` under the merchant's schedule, as its one line. */
export function scheduledFee(schedule: FeeSchedule, amount: bigint, currency: string): FeeLine {
  const percent = percentPart(amount, schedule.percentBasisPoints);
  const fixed = fixedPart(schedule, currency);
  const rate = `${(schedule.percentBasisPoints / 100).toString()}%`;
  return { type: 'tessera_fee', amount: percent + fixed, description: `Processing fee (${rate} + ${fixed})` };
}
