"use client";
// Home: the person's sessions, newest first, and a button that starts a new one.
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useTRPC } from "./_lib/trpc";
import styles from "./home.module.css";

export default function Home() {
  const trpc = useTRPC();
  const router = useRouter();
  const sessions = useQuery(trpc.sessions.list.queryOptions());
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
      {sessions.isPending && <p className="muted">Loading sessions…</p>}
      {sessions.error && <p className={styles.error}>Could not load sessions: {sessions.error.message}</p>}
      {sessions.data?.length === 0 && <p className="muted">No sessions yet. Start one to open the IDE.</p>}
      <ul className={styles.list} data-testid="session-list">
        {sessions.data?.map((s) => (
          <li key={s.id}>
            <Link href={`/s/${s.id}`}>{s.title}</Link>
            <span className="muted">
              {s.status} · {new Date(s.updatedAt).toLocaleString()}
            </span>
          </li>
        ))}
      </ul>
    </main>
  );
}
