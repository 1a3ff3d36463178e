/**
 * The life of a refund (DESIGN §4) in one place: its statuses, every allowed change between them
 * and the statuses each operation starts from. Every change is a conditional update
 * (`… WHERE id = $1 AND status = ANY($2)`) whose $2 comes from `operations`, so a settlement job
 * and a late processor answer racing on one refund cannot both win.
 */

export const refundStatuses = ['pending', 'succeeded', 'failed'] as const;
export type RefundStatus = (typeof refundStatuses)[number];

/**
 * The one table of allowed transitions. `pending → pending` is the processor accepting a refund
 * that it settles later: the refund keeps its status and gains the processor's reference.
 */
export const allowedTransitions: Readonly<Record<RefundStatus, readonly RefundStatus[]>> = {
  pending: ['pending', 'succeeded', 'failed'],
  succeeded: [],
  failed: [],
};

/** What each operation may start from and where it may lead. */
export const operations = {
  /** The processor accepted the refund and settles it later. */
  accept: { from: ['pending'], to: ['pending'] },
  /** The processor's final answer: at once, or when the refund settled. */
  settle: { from: ['pending'], to: ['succeeded', 'failed'] },
} as const satisfies Record<string, { from: readonly RefundStatus[]; to: readonly RefundStatus[] }>;
export type RefundOperation = keyof typeof operations;

export function startsFrom(operation: RefundOperation): readonly RefundStatus[] {
  return operations[operation].from;
}

export function canMove(from: RefundStatus, to: RefundStatus): boolean {
  return allowedTransitions[from].includes(to);
}

// The operations must stay within the table; a mistake here stops the service at start-up.
for (const [name, operation] of Object.entries(operations)) {
  for (const from of operation.from) {
    for (const to of operation.to as readonly RefundStatus[]) {
      if (!canMove(from, to)) throw new Error(`refunds/states: ${name} moves ${from} → ${to}, which the table forbids`);
    }
  }
}
