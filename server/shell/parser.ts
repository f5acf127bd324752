// Loads the bash grammar (tree-sitter-bash's wasm under web-tree-sitter) once per process, when
// this module is first imported, so the analysis that the policy, session approvals and the
// read-only classifier share parses synchronously afterwards. A real parser, not a tokenizer:
// every separator bash accepts (newline, `;`, `&`, pipes, bodies, substitutions) is a node.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Language, Parser, type Node, type Tree } from "web-tree-sitter";

export type { Node, Tree };

const require = createRequire(import.meta.url);

/** Compiled here and now: V8 compiles WebAssembly functions lazily, so this only decodes the
 *  file. The asynchronous compile web-tree-sitter does by default waits for V8's helper threads,
 *  which a starting server keeps busy (and runs below its main thread): the start sat idle. */
const compileWasm = (file: string) => new WebAssembly.Module(readFileSync(require.resolve(file)));

async function load(): Promise<Parser> {
  await Parser.init({
    instantiateWasm(
      imports: WebAssembly.Imports,
      done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
    ) {
      const module = compileWasm("web-tree-sitter/web-tree-sitter.wasm");
      done(new WebAssembly.Instance(module, imports), module);
      return {};
    },
  });
  const language = Language.loadSync(compileWasm("tree-sitter-bash/tree-sitter-bash.wasm"));
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}

// Top-level await: every importer (server start, tests, benches) gets a ready parser; about
// 30 ms once, then parsing a command line takes microseconds.
const parser = await load();

/** The first parses compile the grammar's code paths: the server pays that once it listens
 *  (app.ts), not on a person's first call and not while it starts. */
export function warmShellParser(): void {
  for (let i = 0; i < 3; i++)
    parser
      .parse(
        `cat <<EOF\n${"$x `y` \\\n".repeat(200)}EOF\nfor f in *; do [ -f "$f" ] && echo "$(wc -l < "$f")" | sed -n 1p; done 2>&1 | tee out`,
      )
      ?.delete();
}

/** Longest line parsed; a longer one is not analysed (treated as opaque by callers). */
export const MAX_SOURCE = 100_000;
/** Parsing runs on the server's main thread: a line that takes longer (normal ones take well under 1 ms) is not analysed. */
export const PARSE_BUDGET_MS = 300;

/** The syntax tree of `source`, or undefined when it is too long or slow to analyse. */
export function parseShell(source: string): Tree | undefined {
  if (source.length > MAX_SOURCE) return undefined;
  const deadline = performance.now() + PARSE_BUDGET_MS;
  // Returning true cancels the parse (web-tree-sitter's ParseOptions.progressCallback).
  const progressCallback = () => performance.now() > deadline;
  return parser.parse(source, null, { progressCallback }) ?? undefined;
}
