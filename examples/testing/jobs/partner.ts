/**
 * The partner's invoicing API, as the job calls it. Tests replace `createInvoice` (vi.spyOn,
 * jest.spyOn): a unit test never calls the partner.
 */
export interface CreatedInvoice {
  readonly id: string;
}

export const partner = {
  /** POST /invoices with an `Idempotency-Key` header, so a retried call creates one invoice. */
  async createInvoice(
    order: { readonly orderId: string; readonly amountCents: number },
    options: { readonly idempotencyKey: string; readonly signal: AbortSignal },
  ): Promise<CreatedInvoice> {
    const response = await fetch('https://partner.example.com/invoices', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': options.idempotencyKey },
      body: JSON.stringify(order),
      signal: options.signal,
    });
    if (!response.ok) throw new Error(`partner answered ${response.status}`);
    return (await response.json()) as CreatedInvoice;
  },
};
