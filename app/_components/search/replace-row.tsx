"use client";
// Replace in files, under the search box (toggled by ⇄, as VS Code): Replace All asks first,
// then replaces in the files the results list, line by line as the search matched, and says
// what it did (and which files it left alone). Not offered to a share viewer.
import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import type { SearchOptions } from "./search-model";
import styles from "./search.module.css";

interface Props {
  sessionId: string;
  /** The search the results come from. */
  search: SearchOptions;
  /** The files the results list (what is replaced), and how many lines matched. */
  paths: string[];
  lines: number;
}

export function ReplaceRow({ sessionId, search, paths, lines }: Props) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [replacement, setReplacement] = useState("");
  const [done, setDone] = useState<string>();
  const replace = useMutation(
    trpc.files.replace.mutationOptions({
      onSuccess: (r) => {
        const skipped = r.skipped.length
          ? `; left alone: ${r.skipped.map((s) => `${s.path} (${s.reason})`).join(", ")}`
          : "";
        setDone(
          `Replaced ${r.replacements} match${r.replacements === 1 ? "" : "es"} in ${r.files} file${r.files === 1 ? "" : "s"}${skipped}.`,
        );
      },
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.files.search.queryKey() }),
    }),
  );
  const run = () => {
    if (paths.length === 0 || replace.isPending) return;
    const what = `Replace ${lines} matching line${lines === 1 ? "" : "s"} in ${paths.length} file${paths.length === 1 ? "" : "s"} with "${replacement}"? Unsaved edits in those files will be asked about.`;
    if (!confirm(what)) return;
    setDone(undefined);
    replace.mutate({
      sessionId,
      query: search.query,
      regex: search.regex || undefined,
      caseSensitive: search.caseSensitive,
      replacement,
      paths,
    });
  };
  return (
    <>
      <div className={styles.row}>
        <input
          className={styles.query}
          value={replacement}
          onChange={(e) => setReplacement(e.target.value)}
          onKeyDown={(e) => e.key === "Enter" && (e.preventDefault(), run())}
          placeholder={search.regex ? "Replace ($1 for a group)" : "Replace"}
          aria-label="Replace with"
          data-testid="replace-with"
          spellCheck={false}
        />
        <button
          type="button"
          className={styles.opt}
          onClick={run}
          disabled={paths.length === 0 || replace.isPending}
          title="Replace all (Enter)"
          data-testid="replace-all"
        >
          {replace.isPending ? "…" : "All"}
        </button>
      </div>
      {replace.error && (
        <div className={styles.error} data-testid="replace-error">
          {replace.error.message}
        </div>
      )}
      {done && !replace.error && (
        <div className="muted" data-testid="replace-done">
          {done}
        </div>
      )}
    </>
  );
}
