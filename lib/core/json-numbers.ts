/**
 * Numbers that JSON text can hold but a JavaScript reader cannot. RFC 8259 §6 sets no limit on
 * the range or precision of a number; `JSON.parse` (ECMA-262, IEEE 754 binary64) reads
 * `1e400` as `Infinity`, `1e-400` as `0`, and `12345678901234567890` as `12345678901234567168`
 * (printed `12345678901234567000`): the worker would see another value than the one sent, with no
 * error. RFC 8259 §6: "numbers that are [within the range of IEEE 754 binary64] are interoperable
 * in the sense that implementations will agree exactly on their numeric values".
 *
 * Runs on Node 20 (no `JSON.parse` reviver `context.source` there): a small scanner over the
 * number literals of the text, outside strings.
 */
import type { JsonValueProblem } from './json-value.ts';

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (IDENTIFIER.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

/** The problem of one number literal, or undefined when JavaScript reads it as written. */
function numberProblem(literal: string): string | undefined {
  const value = Number(literal);
  if (!Number.isFinite(value)) {
    return `the number ${literal} is beyond the range of JavaScript numbers (±1.8e308): the worker would read ${value}; send it as a string`;
  }
  if (value === 0 && /[1-9]/.test(literal.replace(/[eE].*$/, ''))) {
    return `the number ${literal} is too small for JavaScript numbers: the worker would read 0; send it as a string`;
  }
  // An integer literal is a count or an id, meant exactly; a fraction or an exponent says
  // "a binary64 near this" (as 0.1 or 1e300 do): every JSON reader rounds it the same way.
  if (Math.abs(value) <= Number.MAX_SAFE_INTEGER || !/^-?\d+$/.test(literal)) return undefined;
  if (BigInt(literal) === BigInt(value)) return undefined;
  return `the integer ${literal} is beyond Number.MAX_SAFE_INTEGER (${Number.MAX_SAFE_INTEGER}) and would lose precision: the worker would read ${value}; send it as a string`;
}

interface Frame {
  readonly path: string;
  readonly array: boolean;
  index: number;
  key: string;
  expectKey: boolean;
}

/**
 * Finds every number literal of a JSON text that `JSON.parse` would not read as written: beyond
 * ±1.8e308 (read as `±Infinity`), a non-zero value that underflows to `0`, and an integer literal
 * (digits only) beyond `Number.MAX_SAFE_INTEGER` that no binary64 holds exactly (read as a
 * neighbour: `9007199254740993` → `9007199254740992`). A fraction or an exponent that binary64
 * rounds (`0.1`, `1e300`) is not a problem: every JSON reader rounds it the same way.
 *
 * @param text JSON text that `JSON.parse` accepts (call it after parsing; invalid text gives no
 *   reliable answer).
 * @returns the problems in document order, each with the path of the number (`data.amount`,
 *   `data.items[0]`; the top-level value is `root`).
 */
export function jsonNumberProblems(text: string, root = ''): JsonValueProblem[] {
  const problems: JsonValueProblem[] = [];
  const stack: Frame[] = [];
  const valuePath = (): string => {
    const top = stack.at(-1);
    if (top === undefined) return root === '' ? 'value' : root;
    return top.array ? join(top.path, top.index) : join(top.path, top.key);
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = stack.at(-1);
      if (top !== undefined && !top.array && top.expectKey) {
        top.key = JSON.parse(text.slice(i, end + 1)) as string;
        top.expectKey = false;
      }
      i = end + 1;
    } else if (c === '{' || c === '[') {
      stack.push({
        path: stack.length === 0 ? root : valuePath(),
        array: c === '[',
        index: 0,
        key: '',
        expectKey: c === '{',
      });
      i++;
    } else if (c === '}' || c === ']') {
      stack.pop();
      i++;
    } else if (c === ',') {
      const top = stack.at(-1);
      if (top?.array) top.index++;
      else if (top) top.expectKey = true;
      i++;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const literal = NUMBER.exec(text)?.[0] ?? c;
      const message = numberProblem(literal);
      if (message !== undefined) problems.push({ path: valuePath(), message });
      i += literal.length;
    } else {
      i++;
    }
  }
  return problems;
}
