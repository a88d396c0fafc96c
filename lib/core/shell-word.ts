/**
 * Quoting for the command lines sqs-jobs prints for operators to paste (`sqs-jobs dlq ...`,
 * `export AWS_ENDPOINT_URL_SQS=...`): POSIX shell single quotes, the one quoting in which no
 * character is special (POSIX Shell Command Language, 2.2.2 Single-Quotes).
 */

/** A word for a shell command line: as it is when it holds only safe characters, else single-quoted. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}
