"use client";
// Home: the person's sessions, newest first, a button that starts a new one, and a delete per
// session (after confirmation; refused with the reason while a turn runs).
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "./_lib/trpc";
import styles from "./home.module.css";

export default function Home() {
  const trpc = useTRPC();
  const router = useRouter();
  const sessions = useQuery(trpc.sessions.list.queryOptions());
  const queryClient = useQueryClient();
  const remove = useMutation(
    trpc.sessions.remove.mutationOptions({ onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.sessions.list.queryKey() }) }),
  );
  const confirmRemove = (s: { id: string; title: string }) => {
    if (confirm(`Delete the session "${s.title}" with its chat and history? The workspace's files stay. This cannot be undone.`)) remove.mutate({ id: s.id });
  };
  const create = useMutation(
    trpc.sessions.create.mutationOptions({ onSuccess: (session) => router.push(`/s/${session.id}`) }),
  );
  return (
    <main className={styles.home}>
      <header className={styles.header}>
        <h1>Quiver</h1>
        <Link href="/settings/policy" className={styles.navLink}>
          Tool policy
        </Link>
        <button onClick={() => create.mutate({})} disabled={create.isPending} data-testid="new-session">
          {create.isPending ? "Creating…" : "New session"}
        </button>
      </header>
      {create.error && <p className={styles.error}>Could not create a session: {create.error.message}</p>}
      {remove.error && <p className={styles.error} data-testid="remove-error">Could not delete the session: {remove.error.message}</p>}
      {sessions.isPending && <p className="muted">Loading sessions…</p>}
      {sessions.error && <p className={styles.error}>Could not load sessions: {sessions.error.message}</p>}
      {sessions.data?.length === 0 && <p className="muted">No sessions yet. Start one to open the IDE.</p>}
      <ul className={styles.list} data-testid="session-list">
        {sessions.data?.map((s) => (
          <li key={s.id} data-testid="session-item" data-id={s.id}>
            <Link href={`/s/${s.id}`} className={styles.sessionLink}>{s.title}</Link>
            <span className="muted">
              {s.status} · {new Date(s.updatedAt).toLocaleString()}
            </span>
            <button type="button" className={styles.remove} aria-label={`Delete ${s.title}`} title="Delete this session" disabled={remove.isPending && remove.variables?.id === s.id} onClick={() => confirmRemove(s)} data-testid="session-delete">
              Delete
            </button>
          </li>
        ))}
      </ul>
    </main>
  );
}
