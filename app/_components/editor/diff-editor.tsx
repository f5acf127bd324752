"use client";
// Monaco's diff editor (side by side), loaded only in the browser via next/dynamic.
// @monaco-editor/react 4.7 disposes the two text models before the diff widget that holds
// them, and Monaco then reports "TextModel got disposed before DiffEditorWidget model got
// reset" at every unmount (monaco-react#647). So the wrapper keeps the models, and this
// component lets go of them itself: a layout-effect cleanup runs before the wrapper's passive
// one, while the widget is still alive to be detached from them.
import { DiffEditor, type DiffOnMount } from "@monaco-editor/react";
import { useLayoutEffect, useRef } from "react";
import { languageFor } from "../../_lib/monaco/setup";
import { useDarkMode } from "../../_lib/theme";

type DiffWidget = Parameters<DiffOnMount>[0];

export default function MonacoDiff({
  path,
  original,
  modified,
  height = 240,
}: {
  path: string;
  original: string;
  modified: string;
  height?: number | string;
}) {
  const dark = useDarkMode();
  const widget = useRef<DiffWidget | null>(null);
  useLayoutEffect(
    () => () => {
      const w = widget.current;
      widget.current = null;
      const models = w?.getModel();
      w?.setModel(null);
      models?.original.dispose();
      models?.modified.dispose();
    },
    [],
  );
  return (
    <DiffEditor
      height={height}
      original={original}
      modified={modified}
      language={languageFor(path)}
      theme={dark ? "vs-dark" : "vs"}
      keepCurrentOriginalModel
      keepCurrentModifiedModel
      onMount={(w) => (widget.current = w)}
      options={{
        readOnly: true,
        renderSideBySide: true,
        minimap: { enabled: false },
        scrollBeyondLastLine: false,
        automaticLayout: true,
      }}
    />
  );
}
