/**
 * The characters SQS takes in a message body and in the value of a `String` (or `Number`)
 * message attribute, in one place for the client, the runtime and the operator tools.
 *
 * Rule (SendMessage API reference, `MessageBody`; W3C XML 1.0 §2.2 "Characters"):
 * `#x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF`.
 * A message with any other character is refused with `InvalidMessageContents` (newer revisions of
 * the page say SQS instead replaces such characters with U+FFFD: lossy either way, so none is ever
 * sent). `MessageAttributeValue` reference: "For string data types, the Value attribute has the
 * same restrictions on the content as the message body".
 *
 * Refused, in a JavaScript string: the C0 controls other than tab, LF and CR (U+0000–U+0008,
 * U+000B, U+000C, U+000E–U+001F, e.g. NUL and the ESC of ANSI colour codes), U+FFFE, U+FFFF and
 * lone UTF-16 surrogates (no UTF-8 form). Every refused character is in the BMP, so it has a
 * four-digit `\uXXXX` form.
 */

/** One refused character: with the `u` flag a lone surrogate is a character of its own; a pair is one astral character. */
const REFUSED = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const REFUSED_ALL = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** A character SQS refuses, where it was found. */
export interface RefusedCharacter {
  /** Its code (a lone surrogate's own code unit), e.g. `0xFFFF`. */
  readonly codePoint: number;
  /** UTF-16 index in the text. */
  readonly index: number;
  /** `U+FFFF` style name. */
  readonly name: string;
}

function hex4(codePoint: number): string {
  return codePoint.toString(16).toUpperCase().padStart(4, '0');
}

/** Whether SQS takes every character of `text` in a body or a String attribute value. */
export function isValidSqsText(text: string): boolean {
  return !REFUSED.test(text);
}

/** The first character of `text` SQS refuses, or undefined when there is none. */
export function firstRefusedCharacter(text: string): RefusedCharacter | undefined {
  const match = REFUSED.exec(text);
  if (!match) return undefined;
  const codePoint = match[0].codePointAt(0) as number;
  return { codePoint, index: match.index, name: `U+${hex4(codePoint)}` };
}

/**
 * Replaces every character SQS refuses by its six-character escape `\uXXXX` (lowercase hex, as
 * `JSON.stringify` writes escapes); everything else is kept.
 *
 * - On JSON text this is lossless: in valid JSON such characters can only stand inside strings
 *   (JSON whitespace is ASCII and raw C0 controls are not valid JSON), where `\uXXXX` means the
 *   same character, so `JSON.parse` gives back the same value (RFC 8259 §7).
 * - On other text (error messages, stacks) it keeps the text readable and shows what was there:
 *   `"\x1b[31mred"` becomes `"\u001b[31mred"`.
 */
export function escapeRefusedCharacters(text: string): string {
  if (isValidSqsText(text)) return text;
  return text.replace(REFUSED_ALL, (character) => `\\u${hex4(character.charCodeAt(0)).toLowerCase()}`);
}

/**
 * JSON text of `value` that SQS takes as a body and that `JSON.parse` turns back into the same
 * value: `JSON.stringify` (which already escapes C0 controls and lone surrogates, ECMA-262
 * well-formed `JSON.stringify`) with U+FFFE and U+FFFF escaped as well.
 *
 * @returns undefined where `JSON.stringify` does (undefined, a function, a symbol).
 * @throws {TypeError} as `JSON.stringify` does (a bigint, a circular structure).
 */
export function stringifyForSqs(value: unknown): string | undefined {
  const json = JSON.stringify(value) as string | undefined;
  return json === undefined ? undefined : escapeRefusedCharacters(json);
}

/**
 * A body to send on (dead-lettering, redrive): `body` itself, untouched, when SQS takes it
 * (every body SQS delivered does); otherwise its refused characters escaped
 * ({@link escapeRefusedCharacters}: the same JSON value when the body is JSON).
 */
export function bodyToSendOn(body: string): string {
  return escapeRefusedCharacters(body);
}
