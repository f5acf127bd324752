"use client";
// Monaco from the local package, never a CDN: @monaco-editor/react's loader is pointed at the
// bundled module, and every worker label gets a module worker built from this folder
// (under both bundlers the workers fail to load otherwise). Imported only by client components loaded with ssr: false.
import * as monaco from "monaco-editor";
import { loader } from "@monaco-editor/react";
import { configureTypeScript } from "./typescript";

type WorkerFactory = () => Worker;

const workers: Record<string, WorkerFactory> = {
  json: () => new Worker(new URL("./json.worker.ts", import.meta.url), { type: "module" }),
  css: () => new Worker(new URL("./css.worker.ts", import.meta.url), { type: "module" }),
  scss: () => new Worker(new URL("./css.worker.ts", import.meta.url), { type: "module" }),
  less: () => new Worker(new URL("./css.worker.ts", import.meta.url), { type: "module" }),
  html: () => new Worker(new URL("./html.worker.ts", import.meta.url), { type: "module" }),
  handlebars: () => new Worker(new URL("./html.worker.ts", import.meta.url), { type: "module" }),
  razor: () => new Worker(new URL("./html.worker.ts", import.meta.url), { type: "module" }),
  typescript: () => new Worker(new URL("./ts.worker.ts", import.meta.url), { type: "module" }),
  javascript: () => new Worker(new URL("./ts.worker.ts", import.meta.url), { type: "module" }),
};
const editorWorker: WorkerFactory = () =>
  new Worker(new URL("./editor.worker.ts", import.meta.url), { type: "module" });

(self as unknown as { MonacoEnvironment: monaco.Environment }).MonacoEnvironment = {
  getWorker: (_id: string, label: string) => (workers[label] ?? editorWorker)(),
};

loader.config({ monaco });
configureTypeScript(monaco.typescript);

export { monaco };

/** Monaco's language id for a path, from the languages it knows (extension and file name). */
export function languageFor(path: string): string {
  const name = path.split("/").pop() ?? path;
  const dot = name.lastIndexOf(".");
  const ext = dot > 0 ? name.slice(dot).toLowerCase() : "";
  for (const lang of monaco.languages.getLanguages()) {
    if (lang.filenames?.includes(name)) return lang.id;
    if (ext && lang.extensions?.some((e) => e.toLowerCase() === ext)) return lang.id;
  }
  return "plaintext";
}

const warming = new Map<string, Promise<void>>();

async function warmOne(id: string): Promise<void> {
  // A model of the language is what triggers its lazy contributions.
  const model = monaco.editor.createModel("", id);
  try {
    await monaco.editor.colorize("", id, {});
    const service =
      id === "typescript"
        ? monaco.typescript.getTypeScriptWorker
        : id === "javascript"
          ? monaco.typescript.getJavaScriptWorker
          : undefined;
    if (service) {
      // A first type check builds the standard library's types (seconds of a core on a slow
      // machine): done now, not beside the person's first opens and keystrokes.
      const worker = await (await service())(model.uri);
      await worker.getSemanticDiagnostics(model.uri.toString());
    }
  } catch {
    // Only a head start: the first open of this language loads whatever is missing.
  } finally {
    model.dispose();
  }
}

/**
 * Loads what a language needs before its first file opens: the tokenizer and configuration
 * (lazy chunks) and, for TypeScript/JavaScript, the language worker. Otherwise they start at
 * the first open and the worker boots on the second core while the next files open.
 */
export async function warmUp(languageIds: readonly string[]): Promise<void> {
  await Promise.all(
    languageIds
      .filter((id) => id !== "plaintext")
      .map((id) => {
        let p = warming.get(id);
        if (!p) warming.set(id, (p = warmOne(id)));
        return p;
      }),
  );
}

/** The most common languages among `paths`, at most `limit` of them. */
export function commonLanguages(paths: readonly string[], limit = 3): string[] {
  // One language lookup per extension, not per file: a tree may list thousands.
  const byExt = new Map<string, { path: string; n: number }>();
  for (const p of paths) {
    const name = p.slice(p.lastIndexOf("/") + 1);
    const dot = name.lastIndexOf(".");
    const key = dot > 0 ? name.slice(dot).toLowerCase() : name;
    const e = byExt.get(key);
    if (e) e.n++;
    else byExt.set(key, { path: p, n: 1 });
  }
  const counts = new Map<string, number>();
  for (const { path, n } of byExt.values()) {
    const lang = languageFor(path);
    if (lang !== "plaintext") counts.set(lang, (counts.get(lang) ?? 0) + n);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([lang]) => lang);
}
