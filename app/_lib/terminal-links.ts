// Links in a line of terminal output, pure: web addresses, and places in workspace files as
// compilers, test runners and stack traces print them (`src/a.ts:12:5`, tsc's `src/a.ts(12,5)`,
// Python's `File "x.py", line 12`). A path is a link only when the workspace has that file, so
// words that merely look like paths stay plain. A local address (localhost, 127.0.0.1, 0.0.0.0)
// is one the runner serves: the IDE shows it in the preview, which can reach it.

export type LinkTarget =
  | { kind: "file"; path: string; line?: number; column?: number }
  | { kind: "url"; url: string; preview?: { port: number; path: string } };

export interface TerminalLink {
  /** [start, end) in the line's text. */
  start: number;
  end: number;
  target: LinkTarget;
}

const URL_RE = /\bhttps?:\/\/[^\s"'`<>]+/g;
// A path (at least one letter, a dot or slash in it), then :line[:col], or (line,col).
const PATH_RE = /(?<![\w/.@+~-])((?:\.{0,2}\/)?[\w@+~.-]*[\w@+~-][\w@+~./-]*)(?::(\d+)(?::(\d+))?|\((\d+),(\d+)\))?/g;
const PYTHON_RE = /File "([^"]+)", line (\d+)/g;
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "0.0.0.0", "[::1]"]);

/** The workspace file `printed` names: relative to the workspace root ("./" allowed), or an
 *  absolute path that ends in a workspace file (the longest such). */
export function workspaceFile(printed: string, isFile: (path: string) => boolean): string | undefined {
  const rel = printed.replace(/^(\.\/)+/, "");
  if (!rel.startsWith("/")) return isFile(rel) ? rel : undefined;
  const parts = rel.split("/").filter(Boolean);
  for (let i = 0; i < parts.length; i++) {
    const candidate = parts.slice(i).join("/");
    if (isFile(candidate)) return candidate;
  }
  return undefined;
}

function urlTarget(text: string): LinkTarget | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (!LOCAL_HOSTS.has(url.hostname)) return { kind: "url", url: url.href };
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  return { kind: "url", url: url.href, preview: { port, path: `${url.pathname}${url.search}${url.hash}` } };
}

export function terminalLinks(text: string, isFile: (path: string) => boolean): TerminalLink[] {
  const links: TerminalLink[] = [];
  const taken = (start: number, end: number) => links.some((l) => start < l.end && end > l.start);
  for (const m of text.matchAll(URL_RE)) {
    // Sentence punctuation and closing brackets after an address are not part of it.
    const raw = m[0].replace(/[.,;:!?)\]}>]+$/, "");
    const target = urlTarget(raw);
    if (target) links.push({ start: m.index!, end: m.index! + raw.length, target });
  }
  for (const m of text.matchAll(PYTHON_RE)) {
    const path = workspaceFile(m[1], isFile);
    if (path && !taken(m.index!, m.index! + m[0].length))
      links.push({ start: m.index!, end: m.index! + m[0].length, target: { kind: "file", path, line: Number(m[2]) } });
  }
  for (const m of text.matchAll(PATH_RE)) {
    const [whole, printed, line, column, tscLine, tscColumn] = m;
    // "see src/a.ts." ends a sentence; the dot is not the file's.
    const trimmed = printed.replace(/[.,;:]+$/, "");
    const path = workspaceFile(trimmed, isFile);
    const end = m.index! + (line || tscLine ? whole.length : trimmed.length);
    if (!path || taken(m.index!, end)) continue;
    const target: LinkTarget = { kind: "file", path };
    const l = Number(line ?? tscLine);
    const c = Number(column ?? tscColumn);
    if (l > 0) target.line = l;
    if (c > 0) target.column = c;
    links.push({ start: m.index!, end, target });
  }
  return links.sort((a, b) => a.start - b.start);
}
