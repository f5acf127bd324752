"use client";
// The Monaco editor (browser only, loaded with next/dynamic): one model per open file, kept
// across tab switches with its undo history and view state. The page drives buffers through
// EditorBuffers; changes made by it (a reload from disk) are applied as undoable edits and do
// not count as the person's edits.
import { useEffect, useRef } from "react";
import Editor, { type OnMount } from "@monaco-editor/react";
import { languageFor, monaco } from "../../_lib/monaco/setup";
import { useDarkMode } from "../../_lib/theme";
import type { EditorBuffers } from "../../_lib/use-open-files";

interface Props {
  path: string;
  initial: string;
  onReady(buffers: EditorBuffers): void;
  onEdit(path: string, text: string): void;
  onSave(path: string): void;
  onQuickOpen(): void;
}

const uriOf = (path: string) => monaco.Uri.from({ scheme: "file", path: `/${path}` });

export default function CodeEditor({ path, initial, onReady, onEdit, onSave, onQuickOpen }: Props) {
  const dark = useDarkMode();
  const applying = useRef(false);
  const handlers = useRef({ onEdit, onSave, onQuickOpen, path });
  handlers.current = { onEdit, onSave, onQuickOpen, path };

  useEffect(() => {
    onReady({
      getText: (p) => monaco.editor.getModel(uriOf(p))?.getValue(),
      setText: (p, text) => {
        const model = monaco.editor.getModel(uriOf(p));
        if (!model) return void monaco.editor.createModel(text, languageFor(p), uriOf(p));
        if (model.getValue() === text) return;
        applying.current = true;
        try {
          model.pushEditOperations([], [{ range: model.getFullModelRange(), text }], () => null);
        } finally {
          applying.current = false;
        }
      },
      dispose: (p) => monaco.editor.getModel(uriOf(p))?.dispose(),
    });
  }, [onReady]);

  const mount: OnMount = (editor) => {
    editor.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.KeyS, () => handlers.current.onSave(handlers.current.path));
    editor.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.KeyP, () => handlers.current.onQuickOpen());
    editor.onDidChangeModelContent(() => {
      if (applying.current) return;
      const model = editor.getModel();
      if (model) handlers.current.onEdit(handlers.current.path, model.getValue());
    });
  };

  return (
    <div style={{ height: "100%" }} data-testid="code-editor" data-language={languageFor(path)}>
    <Editor
      path={uriOf(path).toString()}
      defaultValue={initial}
      defaultLanguage={languageFor(path)}
      theme={dark ? "vs-dark" : "vs"}
      onMount={mount}
      keepCurrentModel
      loading={<div className="muted">Loading editor…</div>}
      options={{ automaticLayout: true, minimap: { enabled: true }, fontSize: 13, tabSize: 2, scrollBeyondLastLine: false }}
    />
    </div>
  );
}
