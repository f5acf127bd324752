// Stack traces of the compiled server point into its TypeScript sources, with the source map of
// a bundle read the first time one of its frames is printed. Node's own source maps
// (process.setSourceMapsEnabled) read and parse the map of every module as it loads, the 2.5 MB
// of the server's bundle and those of its packages and of Next.js: about 150 ms of each start,
// for traces that most starts never print. Frames outside the build stay as V8 writes them.
// Plain JavaScript on purpose: start.mjs installs it before anything is compiled.
import { readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { dirname, isAbsolute, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** Maps the frames of files under `buildDir` (a folder path) in every stack trace from now on. */
export function mapStackTraces(buildDir) {
  const prefix = buildDir.endsWith(sep) ? buildDir : buildDir + sep;
  /** @type {Map<string, SourceMap | null>} */
  const maps = new Map();
  const mapOf = (file) => {
    if (!maps.has(file)) {
      let map = null;
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, "utf8")));
      } catch {
        // no map, or not readable: its frames stay as they are
      }
      maps.set(file, map);
    }
    return maps.get(file);
  };

  const original = (frame) => {
    let file = frame.getFileName();
    if (!file) return undefined;
    if (file.startsWith("file://")) file = fileURLToPath(file);
    if (!file.startsWith(prefix)) return undefined;
    const line = frame.getLineNumber();
    const column = frame.getColumnNumber();
    if (line == null || column == null) return undefined;
    const entry = mapOf(file)?.findEntry(line - 1, column - 1);
    if (!entry?.originalSource) return undefined;
    const source = entry.originalSource.startsWith("file://")
      ? fileURLToPath(entry.originalSource)
      : isAbsolute(entry.originalSource)
        ? entry.originalSource
        : resolve(dirname(file), entry.originalSource);
    const where = `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
    const name = frame.getFunctionName() ?? entry.name;
    const label = `${frame.isAsync() ? "async " : ""}${frame.isConstructor() ? "new " : ""}`;
    return name ? `${label}${name} (${where})` : `${label}${where}`;
  };

  Error.prepareStackTrace = (error, frames) => {
    let head;
    try {
      head = Error.prototype.toString.call(error);
    } catch {
      head = "<error>";
    }
    const lines = frames.map((frame) => {
      let text;
      try {
        text = original(frame);
      } catch {
        // a frame that cannot be mapped is printed as it is
      }
      return `    at ${text ?? frame.toString()}`;
    });
    return [head, ...lines].join("\n");
  };
}
