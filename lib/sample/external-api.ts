/**
 * Client of the sample app's external services (payment, mail, invoice), reached over HTTP at
 * `EXTERNAL_API_URL` (docs/contracts.md). Locally the fake service of
 * `lib/sample/external-service.ts` answers; in AWS, whatever the variable points at.
 *
 * Every request:
 * - carries an `Idempotency-Key` header (the IETF draft "The Idempotency-Key HTTP Header
 *   Field"), so a retry after a lost response is answered from the server's record instead of
 *   repeating the side effect;
 * - has a timeout: `AbortSignal.any([jobSignal, AbortSignal.timeout(timeoutMs)])`, so it ends
 *   with the job's time limit or its own, whichever comes first;
 * - maps a non-2xx response to an {@link ExternalApiError} carrying `status` and `headers`, which
 *   `classifyError` reads (429/5xx transient with `Retry-After`, other 4xx permanent), except two
 *   statuses that mean something specific for idempotent requests: 409 (the key is being
 *   processed by another request) is a {@link TransientError}, 422 (the key was used with another
 *   payload) a {@link PermanentError}.
 */
import { JobError, PermanentError, parseRetryAfterMs, TransientError } from 'sqs-jobs';

/** Default timeout of one outbound request, in milliseconds. */
export const DEFAULT_EXTERNAL_TIMEOUT_MS = 2_000;

/** A non-2xx answer of the external API; `status` and `headers` are what `classifyError` reads. */
export class ExternalApiError extends JobError {
  // Spelled out: a minified bundle renames classes, and `name` is DLQ evidence.
  override name = 'ExternalApiError';
  /** HTTP status code. */
  readonly status: number;
  /** Response headers (e.g. `retry-after`). */
  readonly headers: Headers;

  constructor(message: string, status: number, headers: Headers, context: Record<string, unknown>) {
    super(message, { context: { ...context, status } });
    this.status = status;
    this.headers = headers;
  }
}

/** Input of {@link ExternalApi.capturePayment}. */
export interface CapturePaymentRequest {
  readonly bookingId: string;
  readonly userId: string;
  readonly amountCents: number;
}

/** Input of {@link ExternalApi.sendEmail}. */
export interface SendEmailRequest {
  readonly bookingId: string;
  readonly to: string;
  readonly template: string;
}

/** Input of {@link ExternalApi.issueInvoice}. */
export interface IssueInvoiceRequest {
  readonly bookingId: string;
  readonly userId: string;
  readonly sku: string;
  readonly quantity: number;
}

/** Per-call options: the job's signal and the idempotency key to send. */
export interface CallOptions {
  /** `ctx.idempotencyKey(step)` of the calling job. */
  readonly idempotencyKey: string;
  /** The job's `ctx.signal`. */
  readonly signal?: AbortSignal;
}

/** Options of {@link ExternalApi}. */
export interface ExternalApiOptions {
  /** Base URL, e.g. `http://127.0.0.1:4010`. @default `process.env.EXTERNAL_API_URL` */
  readonly baseUrl?: string;
  /** Timeout of one request in ms. @default `EXTERNAL_API_TIMEOUT_MS` or {@link DEFAULT_EXTERNAL_TIMEOUT_MS} */
  readonly timeoutMs?: number;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/** The payment, mail and invoice calls of the sample jobs. */
export class ExternalApi {
  readonly #baseUrl: string | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: ExternalApiOptions = {}) {
    this.#baseUrl = options.baseUrl;
    const fromEnv = Number(process.env.EXTERNAL_API_TIMEOUT_MS);
    this.#timeoutMs =
      options.timeoutMs ?? (Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_EXTERNAL_TIMEOUT_MS);
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** Captures a payment (`POST /payments`). @returns the payment id. */
  async capturePayment(request: CapturePaymentRequest, options: CallOptions): Promise<{ paymentId: string }> {
    const body = await this.#post('/payments', request, options);
    return { paymentId: String(body.paymentId) };
  }

  /** Sends an email (`POST /emails`). @returns the mail provider's message id. */
  async sendEmail(request: SendEmailRequest, options: CallOptions): Promise<{ messageId: string }> {
    const body = await this.#post('/emails', request, options);
    return { messageId: String(body.messageId) };
  }

  /** Issues an invoice (`POST /invoices`). @returns the invoice id. */
  async issueInvoice(request: IssueInvoiceRequest, options: CallOptions): Promise<{ invoiceId: string }> {
    const body = await this.#post('/invoices', request, options);
    return { invoiceId: String(body.invoiceId) };
  }

  async #post(path: string, payload: object, options: CallOptions): Promise<Record<string, unknown>> {
    const baseUrl = this.#baseUrl ?? process.env.EXTERNAL_API_URL;
    if (!baseUrl) throw new PermanentError('EXTERNAL_API_URL is not set: nowhere to send external calls');
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const url = new URL(path, baseUrl);
    const context = { path, idempotencyKey: options.idempotencyKey };
    const response = await this.#fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': options.idempotencyKey },
      body: JSON.stringify(payload),
      signal,
    });
    const text = await response.text();
    if (response.ok) {
      try {
        return JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw new TransientError(`${path} answered ${response.status} with a body that is not JSON`, {
          context,
        });
      }
    }
    const detail = text.slice(0, 200);
    if (response.status === 409) {
      const retryAfterMs = parseRetryAfterMs(response.headers.get('retry-after')) ?? 1_000;
      throw new TransientError(`${path}: idempotency key in use by another request (409): ${detail}`, {
        context,
        retryAfterMs,
      });
    }
    if (response.status === 422) {
      throw new PermanentError(`${path}: idempotency key reused with another payload (422): ${detail}`, {
        context,
      });
    }
    throw new ExternalApiError(
      `${path} answered ${response.status}: ${detail}`,
      response.status,
      response.headers,
      context,
    );
  }
}
