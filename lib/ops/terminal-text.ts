/**
 * Text made safe for the operator's terminal, for every renderer of the ops CLI
 * (lib/ops/*format*.ts, limits.ts). What they print comes in good part from whoever could send to
 * a queue (job ids, types, `ErrorReason`, bodies): a control character there must not drive the
 * terminal (an escape sequence that clears or retitles it), split one printed line into two (a
 * line feed in an `ErrorReason`), or reorder what is shown (a bidi override in a job id makes
 * `job 1234‮txt.exe` read backwards).
 *
 * Escaped as `\uXXXX` (lowercase hex, as `JSON.stringify` writes escapes): the C0 controls
 * U+0000–U+001F (tab and line feed included, inside a line), DEL and the C1 controls
 * U+007F–U+009F, and the bidi embedding, override and isolate controls U+202A–U+202E and
 * U+2066–U+2069 (Unicode UAX #9, "Explicit Directional Formatting Characters",
 * https://www.unicode.org/reports/tr9/#Explicit_Directional_Embeddings).
 */

/** Whether the UTF-16 unit `code` is shown escaped. */
function escaped(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** One field or line as printed: every control and bidi character escaped, line feeds included. */
export function terminalField(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!escaped(code)) continue;
    out += `${text.slice(from, i)}\\u${code.toString(16).padStart(4, '0')}`;
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * The printed text of `lines`: each made safe ({@link terminalField}), so a field holding a line
 * feed stays on its line, then joined with line feeds and ended with one.
 */
export function terminalLines(lines: readonly string[]): string {
  return `${lines.map(terminalField).join('\n')}\n`;
}

/**
 * Text of several lines made safe: its line feeds kept as the line breaks, everything else as
 * {@link terminalField}.
 */
export function terminalSafe(text: string): string {
  return text.split('\n').map(terminalField).join('\n');
}
