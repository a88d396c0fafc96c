/**
 * The business logic both consumers run: charge an order. It is the part a migration keeps as
 * it is; only the code around it (how a record becomes a call, how duplicates are absorbed)
 * changes. `charges` stands for the payment provider: every call is a side effect.
 */
export interface Order {
  readonly orderId: string;
  readonly totalCents: number;
}

/** Side effects per order id, as the payment provider would see them. */
export const charges = new Map<string, number>();

/** Charges an order once per call. */
export async function chargeOrder(order: Order): Promise<{ chargeId: string }> {
  charges.set(order.orderId, (charges.get(order.orderId) ?? 0) + 1);
  return { chargeId: `charge-${order.orderId}` };
}
