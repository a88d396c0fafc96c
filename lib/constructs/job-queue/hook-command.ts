/**
 * One shell command line of a NodejsFunction bundling hook. NodejsFunction runs each hook command
 * with `bash -c` (Docker bundling, and local bundling on Linux and macOS) or `cmd /c` (local
 * bundling on Windows), so every argument is quoted for the shell that will read it.
 */

function quote(arg: string, windows: boolean): string {
  return windows ? `"${arg.replaceAll('"', '\\"')}"` : `'${arg.replaceAll("'", "'\\''")}'`;
}

/**
 * The command line running `args` (program first).
 * @param windows true when `cmd /c` runs it (local bundling on Windows).
 */
export function hookCommand(args: readonly string[], windows: boolean): string {
  const command = args.map((a) => quote(a, windows)).join(' ');
  // cmd /c strips the first and last quote of a line that starts with one: wrap it once more.
  return windows ? `"${command}"` : command;
}
