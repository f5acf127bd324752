"use client";
// Home: the org's projects, each with the person's sessions in it (newest first), a "New
// session" per project, "New project" (a name and where its files come from: empty, a git
// repository and branch, an uploaded archive), and deleting a session or a project (after
// asking; a project's workspaces are removed from their runners). The Default project's list
// comes first and keeps the page's first "New session" button.
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "./_lib/trpc";
import { OrgSwitcher } from "./_components/org-switcher";
import { NewProjectForm } from "./_components/home/new-project-form";
import { ProjectCard } from "./_components/home/project-card";
import styles from "./home.module.css";

export default function Home() {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  // While a workspace is being made (a clone can take a while) the list is asked again until it is ready or failed.
  const projects = useQuery(
    trpc.projects.list.queryOptions(undefined, {
      refetchInterval: (q) => (q.state.data?.some((p) => p.workspace?.state === "creating") ? 2_000 : false),
    }),
  );
  const [creating, setCreating] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.projects.list.queryKey() });
  const create = useMutation(
    trpc.sessions.create.mutationOptions({ onSuccess: (session) => router.push(`/s/${session.id}`) }),
  );
  const remove = useMutation(trpc.sessions.remove.mutationOptions({ onSettled: refresh }));
  const removeProject = useMutation(trpc.projects.remove.mutationOptions({ onSettled: refresh }));
  const first = projects.data?.[0];
  return (
    <main className={styles.home}>
      <header className={styles.header}>
        <h1>Quiver</h1>
        <OrgSwitcher />
        <Link href="/settings/policy" className={styles.navLink}>
          Tool policy
        </Link>
        <Link href="/settings/runners" className={styles.navLink}>
          Runners
        </Link>
        <Link href="/settings/git" className={styles.navLink}>
          Git credentials
        </Link>
        <button type="button" onClick={() => setCreating((v) => !v)} data-testid="new-project">
          New project
        </button>
        <button
          onClick={() => create.mutate(first ? { projectId: first.id } : {})}
          disabled={create.isPending}
          data-testid="new-session"
        >
          {create.isPending && !create.variables?.projectId ? "Creating…" : "New session"}
        </button>
      </header>
      {creating && (
        <NewProjectForm
          onDone={(id) => (
            setCreating(false),
            void refresh(),
            id && document.getElementById(`project-${id}`)?.scrollIntoView()
          )}
          onCancel={() => setCreating(false)}
        />
      )}
      {create.error && <p className={styles.error}>Could not create a session: {create.error.message}</p>}
      {remove.error && (
        <p className={styles.error} data-testid="remove-error">
          Could not delete the session: {remove.error.message}
        </p>
      )}
      {removeProject.error && (
        <p className={styles.error} data-testid="project-remove-error">
          Could not delete the project: {removeProject.error.message}
        </p>
      )}
      {removeProject.data && removeProject.data.leftBehind.length > 0 && (
        <p className={styles.error} data-testid="project-left-behind">
          The project is deleted;{" "}
          {removeProject.data.leftBehind
            .map((l) => `workspace ${l.workspaceId} stays on runner ${l.runnerId} (${l.reason})`)
            .join("; ")}
          .
        </p>
      )}
      {projects.isPending && <p className="muted">Loading projects…</p>}
      {projects.error && <p className={styles.error}>Could not load projects: {projects.error.message}</p>}
      {projects.data?.map((p, i) => (
        <ProjectCard
          key={p.id}
          project={p}
          primary={i === 0}
          newSession={() => create.mutate({ projectId: p.id })}
          creating={create.isPending && create.variables?.projectId === p.id}
          removeSession={(s) => {
            if (
              confirm(
                `Delete the session "${s.title}" with its chat and history? The workspace's files stay. This cannot be undone.`,
              )
            )
              remove.mutate({ id: s.id });
          }}
          removingSession={remove.isPending ? remove.variables?.id : undefined}
          removeProject={() => {
            const n = p.sessions.length;
            if (
              confirm(
                `Delete the project "${p.name}" with its ${n} session${n === 1 ? "" : "s"}, and remove every person's workspace of it (its files) from their runners? This cannot be undone.`,
              )
            )
              removeProject.mutate({ id: p.id });
          }}
          removingProject={removeProject.isPending && removeProject.variables?.id === p.id}
        />
      ))}
    </main>
  );
}
