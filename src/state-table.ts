/**
 * A resource's life as data (docs/architecture.md#habits-of-the-code): its statuses, the one table of allowed changes
 * between them, and named operations, each with the statuses it may start from and the statuses
 * it may lead to. Payments, refunds and invoices each define one.
 *
 * A service never writes a status of its own accord: it asks the table for a Transition and hands
 * it to its conditional update (`UPDATE … SET status = <to> WHERE id = $1 AND status = ANY(<from>)`).
 * So the table is the one place that allows a change, and of two requests racing on one row only
 * the first finds its status in `from`; the other updates zero rows and reports a conflict.
 *
 * Mistakes are programming errors, never answers to a client: an operation that leaves the table
 * stops the process when the defining module loads, and asking at run time for a target status
 * the operation does not lead to throws an Error.
 *
 * Example (refunds):
 *
 *     export const refundStates = defineStateTable({
 *       name: 'refunds',
 *       statuses: ['pending', 'succeeded', 'failed'] as const,
 *       transitions: { pending: ['succeeded', 'failed'], succeeded: [], failed: [] },
 *       operations: { settle: { from: ['pending'], to: ['succeeded', 'failed'] } },
 *     });
 *     const move = refundStates.transition('settle', 'succeeded');
 *     // UPDATE refunds SET status = move.to … WHERE id = $1 AND status = ANY(move.from)
 */

/** What one operation may start from and where it may lead; an empty `to` keeps the status. */
export interface OperationRule<S extends string> {
  readonly from: readonly S[];
  readonly to: readonly S[];
}

/** The argument of a conditional update, made only by a state table's transition(). */
export interface Transition<S extends string> {
  /** The operation's name, for messages. */
  readonly operation: string;
  /** The statuses the row must still have: `… AND status = ANY(from)`. */
  readonly from: readonly S[];
  /** The status to write; undefined for an operation that edits fields and keeps the status. */
  readonly to: S | undefined;
}

export interface StateTable<S extends string, Ops extends Readonly<Record<string, OperationRule<S>>>> {
  readonly name: string;
  readonly statuses: readonly S[];
  readonly transitions: Readonly<Record<S, readonly S[]>>;
  readonly operations: Ops;
  /** The statuses `operation` may start from. */
  startsFrom(operation: keyof Ops & string): readonly S[];
  /** Whether `operation` may start from `status` (for a check before the conditional update). */
  canStart(operation: keyof Ops & string, status: S): boolean;
  /** Whether the table allows `from → to` at all. */
  canMove(from: S, to: S): boolean;
  /**
   * The conditional update of `operation` moving to `to` (omitted: keeping the status, allowed
   * only for an operation whose `to` is empty). Throws an Error for a target the operation does
   * not lead to.
   */
  transition(operation: keyof Ops & string, to?: S): Transition<S>;
}

export function defineStateTable<
  const S extends string,
  const Ops extends Readonly<Record<string, OperationRule<NoInfer<S>>>>,
>(definition: {
  name: string;
  statuses: readonly S[];
  transitions: Readonly<Record<NoInfer<S>, readonly NoInfer<S>[]>>;
  operations: Ops;
}): StateTable<S, Ops> {
  const { name, statuses, transitions, operations } = definition;
  validate(name, statuses, transitions, operations);
  const canMove = (from: S, to: S) => transitions[from].includes(to);
  const ruleOf = (operation: string): OperationRule<S> => {
    const rule = Object.hasOwn(operations, operation) ? operations[operation] : undefined;
    if (!rule) throw new Error(`${name}: no operation named ${operation}`);
    return rule;
  };
  return {
    name,
    statuses,
    transitions,
    operations,
    canMove,
    startsFrom: (operation) => ruleOf(operation).from,
    canStart: (operation, status) => ruleOf(operation).from.includes(status),
    transition(operation, to) {
      const rule = ruleOf(operation);
      if (to === undefined ? rule.to.length > 0 : !rule.to.includes(to)) {
        const target = to === undefined ? 'keep its status' : `lead to ${to}`;
        throw new Error(
          `${name}: ${operation} may not ${target}; it leads to ${rule.to.join(', ') || 'no other status'}`,
        );
      }
      return { operation, from: rule.from, to };
    },
  };
}

/** The table must be closed over its statuses and every operation must stay within it. */
function validate<S extends string>(
  name: string,
  statuses: readonly S[],
  transitions: Readonly<Record<S, readonly S[]>>,
  operations: Readonly<Record<string, OperationRule<S>>>,
): void {
  const known = new Set<string>(statuses);
  const fail = (problem: string): never => {
    throw new Error(`${name} state table: ${problem}`);
  };
  if (known.size !== statuses.length) fail('a status is listed twice');
  for (const status of Object.keys(transitions)) if (!known.has(status)) fail(`unknown status ${status}`);
  for (const from of statuses) {
    if (!Object.hasOwn(transitions, from)) fail(`no transitions listed for ${from}`);
    for (const to of transitions[from]) if (!known.has(to)) fail(`${from} → unknown status ${to}`);
  }
  for (const [operation, rule] of Object.entries(operations)) {
    if (rule.from.length === 0) fail(`${operation} starts from no status`);
    for (const status of [...rule.from, ...rule.to]) {
      if (!known.has(status)) fail(`${operation} names unknown status ${status}`);
    }
    for (const from of rule.from) {
      for (const to of rule.to) {
        if (!transitions[from].includes(to)) fail(`${operation} moves ${from} → ${to}, which the table forbids`);
      }
    }
  }
}
