"use client";
// The IDE's status bar, in words a person reads at a glance: whether the page is connected
// (Connected, Connecting…, Reconnecting…, Offline), whether the runner that holds the workspace
// is there, the workspace's disk use, and what the server's health says is wrong. A page whose
// access ended (a revoked or expired share link, a member no longer let in) says that instead:
// it no longer reconnects, so "Reconnecting…" would be a lie. The technical detail (event seq,
// database) is in each item's tooltip. Items never wrap: each keeps one line and ellipsizes.
import { useEffect, useState } from "react";
import { WorkspaceUsage } from "../workspace-usage";
import type { StreamStatus } from "../../_lib/use-session-events";
import styles from "../ide-frame.module.css";

export type Connection = "live" | "connecting" | "retrying" | "offline" | "ended";

/** What the connection item says (its data-state is the key). */
export const CONNECTION_WORDS: Record<Connection, string> = {
  live: "Connected",
  connecting: "Connecting…",
  retrying: "Reconnecting…",
  offline: "Offline — reconnects when the network is back",
  ended: "Access ended",
};

function useOnline(): boolean {
  const [online, setOnline] = useState(true);
  useEffect(() => {
    const read = () => setOnline(navigator.onLine);
    read();
    window.addEventListener("online", read);
    window.addEventListener("offline", read);
    return () => {
      window.removeEventListener("online", read);
      window.removeEventListener("offline", read);
    };
  }, []);
  return online;
}

/** The page's connection from the socket's state and the event subscription's status. */
export function connectionOf(socket: "open" | "closed" | string, status: StreamStatus, online: boolean): Connection {
  if (status === "ended") return "ended";
  if (!online) return "offline";
  // The subscription stays registered while the socket is down (it resumes by itself), so its
  // own status would still read "live".
  if (socket === "closed" || status === "retrying") return "retrying";
  return status;
}

interface Props {
  sessionId: string;
  socket: string;
  status: StreamStatus;
  /** Why the stream ended or is retrying (the server's words). */
  error?: string;
  viewer: boolean;
  lastSeq: number;
  runner?: { sandboxed: boolean };
  runnerPending: boolean;
  database?: string;
  problems?: string[];
  filesVersion?: number;
}

export function StatusBar(p: Props) {
  const online = useOnline();
  const conn = connectionOf(p.socket, p.status, online);
  const words =
    conn === "ended" ? (p.viewer ? "Share link ended" : "No access to this session") : CONNECTION_WORDS[conn];
  const detail =
    conn === "live"
      ? `Live updates on (event ${p.lastSeq}${p.database ? `, database: ${p.database}` : ""})`
      : (p.error ?? words);
  const ok = conn === "live";
  return (
    <footer className={styles.status} data-testid="status-bar">
      <span className={styles.statusItem} data-testid="events-state" data-state={conn} title={detail}>
        <span className={ok ? styles.dotOk : conn === "connecting" ? styles.dotWait : styles.dotBad} />
        {words}
      </span>
      {/* The runner is the member's to use; a viewer (and a page whose access ended) has no use for it. */}
      {!p.viewer && conn !== "ended" && (
        <span
          className={styles.statusItem}
          data-testid="runner-state"
          data-state={p.runner ? "connected" : p.runnerPending ? "unknown" : "disconnected"}
          title="The runner holds the workspace: files, terminal, tools and preview"
        >
          <span className={p.runner ? styles.dotOk : p.runnerPending ? styles.dotWait : styles.dotBad} />
          {p.runner
            ? `Runner connected${p.runner.sandboxed ? "" : " (unsandboxed)"}`
            : p.runnerPending
              ? "Checking runner…"
              : "Runner disconnected"}
        </span>
      )}
      {p.runner && !p.viewer && conn !== "ended" && (
        <span className={styles.statusItem} data-testid="status-usage">
          <WorkspaceUsage sessionId={p.sessionId} version={p.filesVersion} />
        </span>
      )}
      {/* A database that takes no writes, a data folder nearly full: the server's health says why. */}
      {p.problems && p.problems.length > 0 && (
        <span role="alert" className={styles.statusItem} data-testid="health-problems" title={p.problems.join("\n")}>
          <span className={styles.dotBad} />
          {p.problems.join(" · ")}
        </span>
      )}
    </footer>
  );
}
