// Paths in patch headers, quoted as git quotes them (core.quotePath): a name with a control
// character, `"`, `\` or a byte past ASCII is written in double quotes with C escapes and octal
// bytes. The runner writes the patches of untracked and baseline files itself, and a name is the
// agent's to choose: unquoted, a newline in it would start a forged `diff --git` line of its own.

const NAMED: Record<string, string> = { "\x07": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f", "\r": "r" };

/** `prefix + name` as a patch header names it (`a/x`, or `"a/x\ny"`). */
export function quoteGitPath(prefix: string, name: string): string {
  const text = prefix + name;
  if (!/[\x00-\x1f"\\\x7f-\uffff]/.test(text)) return text;
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const ch = String.fromCharCode(byte);
    if (byte >= 0x20 && byte < 0x7f) out += ch === '"' || ch === "\\" ? `\\${ch}` : ch;
    else out += NAMED[ch] ? `\\${NAMED[ch]}` : `\\${byte.toString(8).padStart(3, "0")}`;
  }
  return `"${out}"`;
}

const UNNAMED: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, "\\": 92 };

/** A quoted header token's path (the text between the quotes), or undefined when malformed. */
export function unquoteGitPath(quoted: string): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < quoted.length; i++) {
    const ch = quoted[i];
    if (ch !== "\\") {
      bytes.push(...Buffer.from(ch, "utf8"));
      continue;
    }
    const next = quoted[++i];
    const octal = /^[0-3][0-7]{2}$/.exec(quoted.slice(i, i + 3))?.[0];
    if (octal) {
      bytes.push(parseInt(octal, 8));
      i += 2;
    } else if (next !== undefined && Object.hasOwn(UNNAMED, next)) bytes.push(UNNAMED[next]);
    else return undefined;
  }
  return Buffer.from(bytes).toString("utf8");
}

/** A unified diff cut into its files' sections, at lines starting `diff --git ` — lines ended by
 *  "\n" alone: a regular expression's `m` flag also starts a line after "\r", U+2028 and U+2029,
 *  which a file's content, or a name git leaves unquoted, may hold. */
export function patchSections(diff: string): string[] {
  const sections: string[] = [];
  let start = -1;
  for (let at = 0; at < diff.length;) {
    const end = diff.indexOf("\n", at);
    const next = end < 0 ? diff.length : end + 1;
    if (diff.startsWith("diff --git ", at)) {
      if (start >= 0) sections.push(diff.slice(start, at));
      start = at;
    }
    at = next;
  }
  if (start >= 0) sections.push(diff.slice(start));
  return sections;
}
