"use client";
// Monaco's diff editor (side by side), loaded only in the browser via next/dynamic.
import { DiffEditor } from "@monaco-editor/react";
import { languageFor } from "../../_lib/monaco/setup";
import { useDarkMode } from "../../_lib/theme";

export default function MonacoDiff({ path, original, modified, height = 240 }: { path: string; original: string; modified: string; height?: number | string }) {
  const dark = useDarkMode();
  return (
    <DiffEditor
      height={height}
      original={original}
      modified={modified}
      language={languageFor(path)}
      theme={dark ? "vs-dark" : "vs"}
      options={{ readOnly: true, renderSideBySide: true, minimap: { enabled: false }, scrollBeyondLastLine: false, automaticLayout: true }}
    />
  );
}
