"use client";
// Monaco from the local package, never a CDN: @monaco-editor/react's loader is pointed at the
// bundled module, and every worker label gets a module worker built from this folder
// (shared/STACK.md). Imported only by client components loaded with ssr: false.
import * as monaco from "monaco-editor";
import { loader } from "@monaco-editor/react";

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
const editorWorker: WorkerFactory = () => new Worker(new URL("./editor.worker.ts", import.meta.url), { type: "module" });

(self as unknown as { MonacoEnvironment: monaco.Environment }).MonacoEnvironment = {
  getWorker: (_id: string, label: string) => (workers[label] ?? editorWorker)(),
};

loader.config({ monaco });

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
