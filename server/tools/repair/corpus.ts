// Real-shaped tool calls (edits carrying code, unicode, escapes) and the ways models damage
// them, shared by the ladder's tests and its benchmark against jsonrepair.

export const REAL_CALLS: { name: string; args: Record<string, unknown> }[] = [
  {
    name: "edit_file",
    args: {
      path: "src/server/routes/users.ts",
      old_str: 'export function greet(name: string) {\n\treturn "Hello, " + name;\n}',
      new_str:
        "export function greet(name: string): string {\n\tconst re = /^[a-z\\d]+$/i;\n\tif (!re.test(name)) throw new Error(`bad name: ${JSON.stringify(name)}`);\n\treturn `Hello, ${name} 👋`;\n}",
      replace_all: false,
    },
  },
  {
    name: "write_file",
    args: {
      path: "scripts/報告/清理.py",
      content:
        '#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n"""Nettoyage des données — naïve café ☕"""\nimport re, sys\n\nPAT = re.compile(r"\\\\(?:n|t|\\")")\n\ndef main(argv):\n    for line in sys.stdin:\n        print(PAT.sub("", line.rstrip("\\r\\n")), end="\\n")\n    return 0\n\nif __name__ == "__main__":\n    sys.exit(main(sys.argv))\n',
    },
  },
  {
    name: "shell",
    args: {
      command: "rg -n \"TODO\\(.*\\)\" src | awk -F: '{print $1}' | sort -u | xargs -I{} sed -i 's/\\t/  /g' {}",
      timeout_ms: 120000,
      cwd: ".",
    },
  },
  {
    name: "apply_patch",
    args: {
      patch:
        "--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,4 @@\n # Quiver\n-A browser IDE.\n+A browser IDE with a governed agent.\n+Ünïcödé: 中文, русский, العربية, 🚀🔥\n \n",
    },
  },
  {
    name: "multi_edit",
    args: {
      path: "app/page.tsx",
      edits: [
        { old_str: '<div className="a">', new_str: "<div className=\"a b\" data-x='1'>" },
        { old_str: "const n = 0;", new_str: "const n = 1e-3 * -42.5;\t// tab\u0001ctl" },
        { old_str: "\\\\server\\share", new_str: 'C:\\Users\\dev\\"quoted"' },
      ],
      options: { dry_run: null, nested: { depth: [1, [2, [3, { k: "v" }]]] } },
    },
  },
  {
    name: "search_text",
    args: { pattern: "\\bfoo\\s*\\(", glob: "**/*.{ts,tsx}", case_sensitive: true, max_results: 50 },
  },
];

export const realCallJson = (i: number) => JSON.stringify(REAL_CALLS[i].args);

/** Turns \n, \r and \t escapes inside strings into the raw characters a model sometimes emits. */
export function rawControlChars(json: string): string {
  let out = "";
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === "\\") {
      const next = json[i + 1];
      if (next === "n" || next === "t" || next === "r") out += next === "n" ? "\n" : next === "t" ? "\t" : "\r";
      else out += c + next;
      i++;
    } else out += c;
  }
  return out;
}

/** Adds a trailing comma before every closer. */
export function trailingCommas(json: string): string {
  return mapOutsideStrings(json, (c, prev) => ((c === "}" || c === "]") && prev !== "{" && prev !== "[" ? `,${c}` : c));
}

export function surplusClosers(json: string): string {
  return `${json}}}`;
}

function mapOutsideStrings(json: string, f: (c: string, prev: string) => string): string {
  let out = "",
    inStr = false,
    prev = "";
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (inStr) {
      out += c;
      if (c === "\\") out += json[++i];
      else if (c === '"') inStr = false;
    } else {
      out += c === '"' ? c : f(c, prev);
      if (c === '"') inStr = true;
    }
    if (!/\s/.test(c)) prev = c;
  }
  return out;
}
