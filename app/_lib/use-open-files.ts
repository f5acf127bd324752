"use client";
// Open editor tabs and what the editor knows about each file: the disk text and hash it started
// from, whether the person has unsaved edits, and a conflict when the agent (or anything else)
// changed the file under those edits. The tab list and active tab are remembered per session.
// Unsaved edits are never dropped quietly: leaving the page asks first, and a renamed file keeps
// them under its new name.
import { useCallback, useEffect, useRef, useState } from "react";
import { TRPCClientError } from "@trpc/client";
import { useTRPCClient } from "./trpc";
import { usePersisted } from "./persisted";
import { markedName } from "./visible-text";

export interface OpenDoc {
  path: string;
  /** Disk content the editor's buffer is based on, and its sha256. */
  base: string;
  hash: string;
  dirty: boolean;
  /** The file changed on disk while the person had unsaved edits. */
  conflict?: { text: string; hash: string };
  error?: string;
  /** Why the file cannot be edited as text (binary, not UTF-8, too large): the editor is not
   *  shown for it and it is never saved, so nothing is written over it. */
  unreadable?: string;
  loading: boolean;
}

/** What the (browser-only) editor lets the page do to its buffers. */
export interface EditorBuffers {
  getText(path: string): string | undefined;
  setText(path: string, text: string): void;
  dispose(path: string): void;
}

interface Tabs {
  open: string[];
  active: string | null;
}
const isTabs = (v: unknown): v is Tabs =>
  !!v &&
  typeof v === "object" &&
  Array.isArray((v as Tabs).open) &&
  (v as Tabs).open.every((p) => typeof p === "string");

const isPaths = (v: unknown): v is string[] => Array.isArray(v) && v.every((p) => typeof p === "string");
const RECENT_MAX = 30;

export function useOpenFiles(sessionId: string) {
  const client = useTRPCClient();
  const [tabs, setTabs, tabsLoaded] = usePersisted<Tabs>(
    `quiver.tabs.${sessionId}`,
    { open: [], active: null },
    isTabs,
  );
  // Files opened, most recent first (quick open lists them first, as VS Code's "recently opened").
  const [recent, setRecent] = usePersisted<string[]>(`quiver.recent.${sessionId}`, [], isPaths);
  useEffect(() => {
    const active = tabs.active;
    if (tabsLoaded && active)
      setRecent((r) => (r[0] === active ? r : [active, ...r.filter((p) => p !== active)].slice(0, RECENT_MAX)));
  }, [tabs.active, tabsLoaded, setRecent]);
  const [docs, setDocsState] = useState<Record<string, OpenDoc>>({});
  // The truth, updated at once: two reads finishing before React renders must each see what the
  // other did (a read's result depends on whether the buffer is dirty or a write is pending).
  const docsRef = useRef(docs);
  const setDocs = useCallback((next: (d: Record<string, OpenDoc>) => Record<string, OpenDoc>) => {
    docsRef.current = next(docsRef.current);
    setDocsState(docsRef.current);
  }, []);
  const buffers = useRef<EditorBuffers | null>(null);

  const patch = useCallback(
    (path: string, p: Partial<OpenDoc>) => {
      setDocs((d) => (d[path] ? { ...d, [path]: { ...d[path], ...p } } : d));
    },
    [setDocs],
  );

  /** `unsaved`: the person's text to keep over what is on disk (a renamed file's edits). */
  const load = useCallback(
    async (path: string, unsaved?: string) => {
      setDocs((d) => ({ ...d, [path]: d[path] ?? { path, base: "", hash: "", dirty: false, loading: true } }));
      try {
        const file = await client.files.read.query({ sessionId, path });
        const doc = docsRef.current[path];
        if (unsaved !== undefined) {
          buffers.current?.setText(path, unsaved);
          patch(path, {
            base: file.content,
            hash: file.hash,
            dirty: unsaved !== file.content,
            loading: false,
            error: undefined,
            unreadable: undefined,
            conflict: undefined,
          });
          return;
        }
        if (doc && !doc.loading && doc.hash === file.hash) return;
        if (doc?.dirty) {
          patch(path, { conflict: { text: file.content, hash: file.hash } });
        } else {
          buffers.current?.setText(path, file.content);
          patch(path, {
            base: file.content,
            hash: file.hash,
            dirty: false,
            loading: false,
            error: undefined,
            unreadable: undefined,
            conflict: undefined,
          });
        }
      } catch (err) {
        const code = err instanceof TRPCClientError ? (err.data as { code?: string } | undefined)?.code : undefined;
        const message = (err as Error).message;
        if (code === "NOT_FOUND") patch(path, { loading: false, error: "This file no longer exists on disk." });
        // The runner refused the file itself (binary, not UTF-8, too large); anything else (no
        // runner) may pass. Edits in the buffer stay editable either way: a save over a changed
        // file still meets the conflict check.
        else if (code === "BAD_REQUEST" && !docsRef.current[path]?.dirty)
          patch(path, { loading: false, error: undefined, unreadable: message });
        else patch(path, { loading: false, error: message });
      }
    },
    [client, sessionId, patch, setDocs],
  );

  // Reopen remembered tabs once the stored list is known.
  useEffect(() => {
    if (!tabsLoaded) return;
    for (const p of tabs.open) if (!docsRef.current[p]) void load(p);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [tabsLoaded]);

  const open = useCallback(
    (path: string) => {
      setTabs((t) => ({ open: t.open.includes(path) ? t.open : [...t.open, path], active: path }));
      if (!docsRef.current[path]) void load(path);
    },
    [load, setTabs],
  );

  const close = useCallback(
    (path: string) => {
      const doc = docsRef.current[path];
      if (doc?.dirty && !confirm(`${markedName(path)} has unsaved changes. Close it anyway?`)) return;
      setTabs((t) => {
        const i = t.open.indexOf(path);
        const rest = t.open.filter((p) => p !== path);
        return { open: rest, active: t.active === path ? (rest[Math.min(i, rest.length - 1)] ?? null) : t.active };
      });
      setDocs(({ [path]: _gone, ...rest }) => rest);
      buffers.current?.dispose(path);
    },
    [setTabs, setDocs],
  );

  /** Saves the buffer; `overwrite` ignores what is on disk (after the person saw the diff). */
  const save = useCallback(
    async (path: string, overwrite = false) => {
      const doc = docsRef.current[path];
      const text = buffers.current?.getText(path);
      if (!doc || text === undefined || doc.loading || doc.unreadable) return;
      try {
        const saved = await client.files.save.mutate({
          sessionId,
          path,
          content: text,
          expectHash: overwrite ? undefined : doc.hash || null,
        });
        patch(path, { base: text, hash: saved.hash, dirty: false, conflict: undefined, error: undefined });
      } catch (err) {
        const code = err instanceof TRPCClientError ? (err.data as { code?: string } | undefined)?.code : undefined;
        if (code === "CONFLICT") {
          const file = await client.files.read.query({ sessionId, path }).catch(() => undefined);
          patch(path, { conflict: file ? { text: file.content, hash: file.hash } : { text: "", hash: "" } });
        } else patch(path, { error: `Not saved: ${(err as Error).message}` });
      }
    },
    [client, sessionId, patch],
  );

  const takeDisk = useCallback(
    (path: string) => {
      const c = docsRef.current[path]?.conflict;
      if (!c) return;
      buffers.current?.setText(path, c.text);
      patch(path, { base: c.text, hash: c.hash, dirty: false, conflict: undefined });
    },
    [patch],
  );

  const setDirty = useCallback(
    (path: string, text: string) => {
      const doc = docsRef.current[path];
      if (doc && doc.dirty !== (text !== doc.base)) patch(path, { dirty: text !== doc.base });
    },
    [patch],
  );

  /** A files.changed event: reload open files it names (or that vanished with a folder). */
  const changed = useCallback(
    (paths: string[]) => {
      for (const p of Object.keys(docsRef.current)) {
        if (paths.some((c) => c === p || p.startsWith(`${c}/`))) void load(p);
      }
    },
    [load],
  );

  const rename = useCallback(
    (from: string, to: string) => {
      setTabs((t) => ({
        open: t.open.map((p) => (p === from || p.startsWith(`${from}/`) ? to + p.slice(from.length) : p)),
        active:
          t.active && (t.active === from || t.active.startsWith(`${from}/`))
            ? to + t.active.slice(from.length)
            : t.active,
      }));
      for (const p of Object.keys(docsRef.current)) {
        if (p === from || p.startsWith(`${from}/`)) {
          const unsaved = docsRef.current[p].dirty ? buffers.current?.getText(p) : undefined;
          buffers.current?.dispose(p);
          setDocs(({ [p]: _old, ...rest }) => rest);
          void load(to + p.slice(from.length), unsaved);
        }
      }
    },
    [load, setTabs, setDocs],
  );

  // Closing or reloading the page with unsaved edits asks first (the browser's own dialog).
  useEffect(() => {
    const onLeave = (e: BeforeUnloadEvent) => {
      if (!Object.values(docsRef.current).some((d) => d.dirty)) return;
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", onLeave);
    return () => window.removeEventListener("beforeunload", onLeave);
  }, []);

  return {
    tabs,
    recent,
    docs,
    open,
    close,
    save,
    takeDisk,
    setDirty,
    changed,
    rename,
    setActive: (p: string) => setTabs((t) => ({ ...t, active: p })),
    buffers,
  };
}
