/**
 * Does a worker's entry file export the handler name NodejsFunction will call? Read from the
 * source text, without running or bundling it, and conservatively: `'unknown'` whenever the
 * text could export the name in a way not recognised here (`export *`, CommonJS `exports`,
 * destructuring or multi-name declarations), so a working entry is never refused.
 */

/** Outcome of {@link findExport}. */
export type ExportAnswer = 'exported' | 'not-exported' | 'unknown';

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The source with comments replaced by spaces; strings and template literals kept. Regular
 * expression literals are not recognised, so the result can be off for some files: it is only
 * ever used as a second view next to the raw text.
 */
export function stripComments(source: string): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      while (i < source.length && source[i] !== '\n') i++;
      out += ' ';
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      i = end === -1 ? source.length : end + 2;
      out += ' ';
    } else if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === '\\' ? 2 : 1;
      out += source.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Names exported by `export { a, b as c, 'd' as "e" }` clauses (with or without `from`). */
function clauseExportNames(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/\bexport\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const raw of m[1]!.split(',')) {
      const item = raw.trim().replace(/^type\s+/, '');
      if (item === '') continue;
      const parts = item.split(/\s+as\s+/);
      const exported = (parts[1] ?? parts[0]!).trim();
      names.push(exported.replace(/^(['"])(.*)\1$/, '$2'));
    }
  }
  return names;
}

function exportsIn(text: string, name: string): boolean {
  const n = escapeRegExp(name);
  if (name === 'default') {
    return /\bexport\s+default\b/.test(text) || clauseExportNames(text).includes('default');
  }
  const declaration = new RegExp(
    `\\bexport\\s+(?:declare\\s+)?(?:abstract\\s+)?(?:async\\s+)?(?:function\\s*\\*?\\s*|(?:const|let|var|class|enum|namespace|using)\\s+)${n}(?![\\w$])`,
  );
  const namespaceReexport = new RegExp(`\\bexport\\s*\\*\\s*as\\s+(?:${n}(?![\\w$])|(['"])${n}\\1)`);
  return declaration.test(text) || namespaceReexport.test(text) || clauseExportNames(text).includes(name);
}

/** Forms that may export `name` without naming it where this scanner looks. */
function mayExportUnseen(text: string, name: string): boolean {
  const n = escapeRegExp(name);
  return (
    /\bexport\s*\*\s*from\b/.test(text) || // export * from './handler'
    /\bmodule\s*\.\s*exports\b/.test(text) || // CommonJS
    /\bexports\s*(?:\.|\[)/.test(text) ||
    /\bexport\s*=/.test(text) || // TypeScript `export =`
    /\bexport\s+(?:declare\s+)?(?:const|let|var)\s*[{[]/.test(text) || // export const { handler } = ...
    new RegExp(`\\bexport\\s+(?:declare\\s+)?(?:const|let|var)\\s[^;]*,\\s*${n}\\s*[=:]`).test(text) // export const a = 1, handler = ...
  );
}

/**
 * Whether `source` (a JavaScript or TypeScript module) exports `name`.
 * Recognised: `export const|let|var|function|async function|function*|class <name>`,
 * `export { x as <name> }`, `export { <name> }`, both also `from '...'` (re-exports), and
 * `export * as <name> from '...'`; for `default`, `export default`.
 * @returns `'exported'` when one of those forms names it; `'unknown'` when the file has a form
 *   that may export it unseen (`export * from`, CommonJS `exports`, `export =`, destructuring
 *   or several declarations in one export); else `'not-exported'`.
 */
export function findExport(source: string, name: string): ExportAnswer {
  const views = [source, stripComments(source)];
  if (views.some((v) => exportsIn(v, name))) return 'exported';
  if (views.some((v) => mayExportUnseen(v, name))) return 'unknown';
  return 'not-exported';
}
