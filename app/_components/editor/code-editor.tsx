"use client";
// The Monaco editor (browser only, loaded with next/dynamic): one model per open file, kept
// across tab switches with its undo history and view state. The page drives buffers through
// EditorBuffers; changes made by it (a reload from disk) are applied as undoable edits and do
// not count as the person's edits. With no file (`path` null) it holds an empty model: the pane
// mounts it while the page is idle, so the first open only swaps models, and meanwhile it warms
// up the workspace's languages (data-warm="done" when finished). Read-only on a shared session.
// `reveal` (a search result) selects a place in the file once it is the one shown. Under the
// editor, a status line: cursor position (a click asks for a line to go to, as Ctrl+G does),
// selection size, language and line endings.
import { useEffect, useMemo, useRef, useState } from "react";
import Editor, { type OnMount } from "@monaco-editor/react";
import type { editor } from "monaco-editor";
import { commonLanguages, languageFor, monaco, warmUp } from "../../_lib/monaco/setup";
import { useDarkMode } from "../../_lib/theme";
import { whenIdle } from "../../_lib/idle";
import { useReadOnly } from "../../_lib/read-only";
import type { EditorBuffers } from "../../_lib/use-open-files";
import styles from "./editor.module.css";
import { TabHint, useTabHint } from "./tab-hint";
import type { FileMarkers } from "./use-diagnostics";

/** A place to show: line and, when known, the columns [column, endColumn) to select (1-based). */
export interface Reveal {
  path: string;
  line: number;
  column?: number;
  endColumn?: number;
}

interface Props {
  path: string | null;
  initial: string;
  /** Workspace files: their most common languages are loaded ahead of the first open. */
  warmPaths: readonly string[];
  onReady(buffers: EditorBuffers): void;
  onEdit(path: string, text: string): void;
  onSave(path: string): void;
  /** A new object each time the person asks, even for the same place. */
  reveal?: Reveal | null;
  /** The language server's diagnostics of a file (use-diagnostics.ts), as markers on its model. */
  markers?: FileMarkers | null;
}

// One object for the component's life: @monaco-editor/react calls updateOptions whenever the
// options prop changes identity.
const OPTIONS: editor.IStandaloneEditorConstructionOptions = {
  automaticLayout: true,
  minimap: { enabled: true },
  fontSize: 13,
  tabSize: 2,
  scrollBeyondLastLine: false,
};
const READ_ONLY: editor.IStandaloneEditorConstructionOptions = { ...OPTIONS, readOnly: true, domReadOnly: true };
const BLANK = "inmemory://quiver/no-file";

interface Cursor {
  line: number;
  column: number;
  /** Characters selected (0: a caret). */
  selected: number;
  eol: "LF" | "CRLF";
}

// Monaco's ids where they are not what a person calls the language.
const LANGUAGE_NAMES: Record<string, string> = {
  typescript: "TypeScript",
  javascript: "JavaScript",
  json: "JSON",
  css: "CSS",
  scss: "SCSS",
  html: "HTML",
  markdown: "Markdown",
  python: "Python",
  rust: "Rust",
  go: "Go",
  java: "Java",
  cpp: "C++",
  c: "C",
  shell: "Shell",
  yaml: "YAML",
  plaintext: "Plain Text",
  sql: "SQL",
};

const uriOf = (path: string) => monaco.Uri.from({ scheme: "file", path: `/${path}` });

const SEVERITY = { error: 8, warning: 4, info: 2 } as const; // monaco.MarkerSeverity

export default function CodeEditor({ path, initial, warmPaths, onReady, onEdit, onSave, reveal, markers }: Props) {
  const readOnly = useReadOnly();
  const dark = useDarkMode();
  const applying = useRef(false);
  const handlers = useRef({ onEdit, onSave, path, readOnly });
  handlers.current = { onEdit, onSave, path, readOnly };
  const [warm, setWarm] = useState<"loading" | "done">("loading");
  const instance = useRef<editor.IStandaloneCodeEditor | null>(null);
  const tabHint = useTabHint();
  const [cursor, setCursor] = useState<Cursor>({ line: 1, column: 1, selected: 0, eol: "LF" });
  const shown = useRef<Reveal | null>(null);
  const wanted = useRef(reveal);
  wanted.current = reveal;
  // Runs after the editor below has switched to `path`'s model (a child's effects run first), and
  // from mount for a reveal asked before Monaco was loaded.
  const showReveal = () => {
    const ed = instance.current;
    const r = wanted.current;
    if (!ed || !r || r === shown.current || r.path !== handlers.current.path) return;
    shown.current = r;
    const line = Math.max(1, Math.min(r.line, ed.getModel()?.getLineCount() ?? r.line));
    const selection = new monaco.Selection(line, r.column ?? 1, line, r.endColumn ?? r.column ?? 1);
    ed.setSelection(selection);
    ed.revealRangeInCenter(selection);
    ed.focus();
  };
  useEffect(showReveal);
  useEffect(() => {
    const model = markers ? monaco.editor.getModel(uriOf(markers.path)) : null;
    if (!markers || !model) return;
    monaco.editor.setModelMarkers(
      model,
      "typescript-language-server",
      markers.diagnostics.map((d) => ({
        startLineNumber: d.line,
        startColumn: d.column,
        endLineNumber: d.endLine,
        endColumn: d.endColumn,
        severity: SEVERITY[d.severity],
        message: d.message,
        ...(d.code ? { code: `TS${d.code}` } : {}),
      })),
    );
  }, [markers, path]);
  const warmKey = useMemo(() => commonLanguages(warmPaths).join(","), [warmPaths]);

  useEffect(() => {
    let live = true;
    // Only once the page is idle: a file opened right away should not compete with it.
    const cancel = whenIdle(
      () => void warmUp(warmKey ? warmKey.split(",") : []).then(() => live && setWarm("done")),
      3000,
    );
    return () => {
      live = false;
      cancel();
    };
  }, [warmKey]);

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
    instance.current = editor;
    showReveal();
    const withFile = (fn: (path: string) => void) => () => {
      const p = handlers.current.path;
      if (p !== null) fn(p);
    };
    const track = () => {
      const model = editor.getModel();
      const sel = editor.getSelection();
      if (!model || !sel) return;
      setCursor({
        line: sel.positionLineNumber,
        column: sel.positionColumn,
        selected: model.getValueLengthInRange(sel),
        eol: model.getEOL() === "\r\n" ? "CRLF" : "LF",
      });
    };
    editor.onDidChangeCursorSelection(track);
    editor.onDidChangeModel(track);
    editor.addCommand(
      monaco.KeyMod.CtrlCmd | monaco.KeyCode.KeyS,
      withFile((p) => void (handlers.current.readOnly || handlers.current.onSave(p))),
    );
    // Tab stays Monaco's (it indents); the first one says how to leave the editor (tab-hint.tsx).
    editor.onKeyDown((e) => {
      if (e.keyCode === monaco.KeyCode.Tab && !e.ctrlKey && !e.altKey && !e.metaKey) tabHint.onTab();
      else if (e.keyCode === monaco.KeyCode.Escape) tabHint.dismiss();
    });
    // Ctrl+P and the other pane keys are caught before Monaco sees them (ide-keys.ts).
    editor.onDidChangeModelContent(() => {
      const p = handlers.current.path;
      if (applying.current || p === null) return;
      const model = editor.getModel();
      if (model) handlers.current.onEdit(p, model.getValue());
    });
  };

  const language = path === null ? "plaintext" : languageFor(path);
  const goToLine = () => {
    instance.current?.focus();
    void instance.current?.getAction("editor.action.gotoLine")?.run();
  };
  return (
    <div
      className={styles.editorWithStatus}
      data-testid="code-editor"
      data-readonly={readOnly}
      data-language={language}
      data-path={path ?? ""}
      data-warm={warm}
    >
      <div className={styles.editorArea} style={{ position: "relative" }}>
        <TabHint shown={tabHint.hint} onDismiss={tabHint.dismiss} />
        <Editor
          path={path === null ? BLANK : uriOf(path).toString()}
          defaultValue={path === null ? "" : initial}
          defaultLanguage={language}
          theme={dark ? "vs-dark" : "vs"}
          onMount={mount}
          keepCurrentModel
          loading={<div className="muted">Loading editor…</div>}
          options={readOnly ? READ_ONLY : OPTIONS}
        />
      </div>
      {path !== null && (
        <div className={styles.statusLine} data-testid="editor-status">
          <button type="button" onClick={goToLine} title="Go to line (Ctrl+G)" data-testid="editor-position">
            Ln {cursor.line}, Col {cursor.column}
            {cursor.selected > 0 ? ` (${cursor.selected} selected)` : ""}
          </button>
          <span>{LANGUAGE_NAMES[language] ?? language}</span>
          <span>{cursor.eol}</span>
          {readOnly && <span>read-only</span>}
        </div>
      )}
    </div>
  );
}
