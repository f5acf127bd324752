"use client";
// Runners, for the org's admins: each runner (live, or gone since when), its labels, capacity,
// free disk and load, and the workspaces of this org placed on it with their state. Workspaces no
// runner could take yet are listed apart.
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import styles from "../policy/policy.module.css";

const gb = (bytes: number | null) => (bytes === null ? "—" : `${(bytes / 1024 ** 3).toFixed(1)} GB`);
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : "—");

export default function RunnersPage() {
  const trpc = useTRPC();
  const runners = useQuery(trpc.runners.list.queryOptions(undefined, { refetchInterval: 5_000 }));
  return (
    <main className={styles.page}>
      <header className={styles.header}>
        <h1>Runners</h1>
        <Link href="/">Home</Link>
      </header>
      {runners.isPending && <p className="muted">Loading runners…</p>}
      {runners.error && (
        <p className={styles.error} data-testid="runners-error">
          Could not load the runners: {runners.error.message}
        </p>
      )}
      {runners.data?.length === 0 && <p className="muted">No runner has connected yet.</p>}
      <table className={styles.rules} data-testid="runners-table">
        <thead>
          <tr>
            <th>Runner</th>
            <th>State</th>
            <th>Labels</th>
            <th>Load</th>
            <th>Free disk</th>
            <th>Workspaces of this org</th>
          </tr>
        </thead>
        <tbody>
          {runners.data?.map((r) => (
            <tr key={r.id || "unplaced"} data-testid="runner-row" data-id={r.id}>
              <td className={styles.match}>{r.id || "(no runner yet)"}</td>
              <td data-testid="runner-state">
                {r.id === "" ? (
                  "waiting for a runner with room"
                ) : r.live ? (
                  <span className={styles.ok}>live since {when(r.connectedAt)}</span>
                ) : (
                  <span className={styles.error}>gone since {when(r.disconnectedAt ?? r.lastSeenAt)}</span>
                )}
              </td>
              <td>{r.labels.length ? r.labels.join(", ") : "—"}</td>
              <td data-testid="runner-load">
                {r.workspaces}
                {r.capacity > 0 ? ` of ${r.capacity}` : ""} workspace{r.workspaces === 1 ? "" : "s"}
              </td>
              <td>{gb(r.freeDiskBytes)}</td>
              <td>
                {r.orgWorkspaces.length === 0 ? (
                  "—"
                ) : (
                  <ul style={{ margin: 0, paddingLeft: 16 }}>
                    {r.orgWorkspaces.map((w) => (
                      <li key={w.id} data-testid="runner-workspace">
                        {w.project} · {w.person} · {w.state}
                        {w.error ? ` (${w.error})` : ""}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}
