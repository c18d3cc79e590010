/**
 * POSIX single quotes for one word of a `sh -c` command line; a quote inside becomes '\''.
 * Words made only of characters that no shell treats specially stay as they are, so that the
 * command lines we log and show stay readable.
 */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9._\-/:=@+]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
