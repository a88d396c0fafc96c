/**
 * The jobs this service sends, as the workers define them (examples/cdk-app/jobs): a producer
 * needs only a job's `type`, its logical `queue` and a Standard Schema of its data
 * (https://standardschema.dev), so it does not depend on the workers' code or schema library.
 */

/**
 * A Standard Schema (v1) of an object with exactly the given string fields.
 * @param {Record<string, (value: string) => string | undefined>} fields field name → check returning a problem or undefined
 */
function objectOf(fields) {
  return {
    '~standard': {
      version: 1,
      vendor: 'producer-js',
      validate(value) {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) {
          return { issues: [{ message: 'expected an object' }] };
        }
        const issues = [];
        for (const [key, check] of Object.entries(fields)) {
          const field = value[key];
          const problem = typeof field === 'string' ? check(field) : 'expected a string';
          if (problem !== undefined) issues.push({ message: problem, path: [key] });
        }
        for (const key of Object.keys(value)) {
          if (!Object.hasOwn(fields, key)) issues.push({ message: 'unknown field', path: [key] });
        }
        return issues.length > 0 ? { issues } : { value };
      },
    },
  };
}

/** Ids only: 1–128 characters. */
const id = (value) => (value.length >= 1 && value.length <= 128 ? undefined : 'expected 1-128 characters');
const oneOf =
  (...allowed) =>
  (value) =>
    allowed.includes(value) ? undefined : `expected one of ${allowed.join(', ')}`;

export const ORDER_STEPS = ['placed', 'paid', 'shipped'];

/** FIFO queue `orders`: send with `partitionKey` = the customer id. */
export const recordOrderStep = {
  type: 'orders.record-step',
  queue: 'orders',
  schema: objectOf({ orderId: id, step: oneOf(...ORDER_STEPS) }),
};

/** Standard queue `emails`. */
export const sendReceipt = {
  type: 'emails.send-receipt',
  queue: 'emails',
  schema: objectOf({ orderId: id }),
};
