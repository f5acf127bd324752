"use client";
// The IDE frame: file tree (left), editor (centre), chat (right), terminal (bottom), and a
// status bar with the runner's connection state. Panes are filled by their own components.
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../_lib/trpc";
import styles from "./ide-frame.module.css";

export function IdeFrame({ sessionId }: { sessionId: string }) {
  const trpc = useTRPC();
  const session = useQuery(trpc.sessions.get.queryOptions({ id: sessionId }, { retry: false }));
  const health = useQuery(trpc.health.get.queryOptions(undefined, { refetchInterval: 2_000 }));
  const runner = health.data?.runners.find((r) => r.connected);

  if (session.error) {
    return (
      <main className={styles.missing}>
        <p>{session.error.message}</p>
        <Link href="/">Back to sessions</Link>
      </main>
    );
  }

  return (
    <div className={styles.frame} data-testid="ide-frame">
      <header className={styles.top}>
        <Link href="/" className={styles.brand}>Quiver</Link>
        <span className={styles.title}>{session.data?.title ?? "…"}</span>
      </header>
      <nav className={styles.files} aria-label="Files" data-testid="pane-files">
        <div className={styles.paneTitle}>Files</div>
      </nav>
      <section className={styles.editor} aria-label="Editor" data-testid="pane-editor">
        <div className={styles.empty}>Open a file from the tree.</div>
      </section>
      <aside className={styles.chat} aria-label="Chat" data-testid="pane-chat">
        <div className={styles.paneTitle}>Agent</div>
      </aside>
      <section className={styles.terminal} aria-label="Terminal" data-testid="pane-terminal">
        <div className={styles.paneTitle}>Terminal</div>
      </section>
      <footer className={styles.status}>
        <span data-testid="runner-state" data-state={runner ? "connected" : health.isPending ? "unknown" : "disconnected"}>
          <span className={runner ? styles.dotOk : styles.dotBad} />
          {runner ? `Runner connected${runner.sandboxed ? "" : " (unsandboxed)"}` : health.isPending ? "Checking runner…" : "Runner disconnected"}
        </span>
        <span className="muted">{health.data ? `database: ${health.data.database.provider}` : ""}</span>
      </footer>
    </div>
  );
}
