"use client";
// One project on the home page: its name and source, the person's workspace state (placed on
// which runner, being made, failed and why), its sessions, and its actions. The first card's
// list is the page's "session-list" (the Default project's, where a plain "New session" goes).
import Link from "next/link";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../../server/api/root";
import styles from "../../home.module.css";

type Project = inferRouterOutputs<AppRouter>["projects"]["list"][number];

function sourceText(s: Project["source"]): string {
  if (s.kind === "git") return `git ${s.url}${s.branch ? ` (${s.branch})` : ""}`;
  if (s.kind === "archive") return `archive ${s.name}`;
  return "empty";
}

function workspaceText(w: Project["workspace"]): string {
  if (!w) return "no workspace yet (made with your first session)";
  if (!w.runnerId) return "waiting for a runner with room";
  if (w.state === "failed") return `could not be made on ${w.runnerId}: ${w.error ?? "unknown error"}`;
  if (w.state === "creating") return `being made on ${w.runnerId}…`;
  return `on runner ${w.runnerId}`;
}

export function ProjectCard(props: {
  project: Project;
  primary: boolean;
  newSession(): void;
  creating: boolean;
  removeSession(s: { id: string; title: string }): void;
  removingSession?: string;
  removeProject(): void;
  removingProject: boolean;
}) {
  const p = props.project;
  const isDefault = p.name === "Default";
  return (
    <section className={styles.project} id={`project-${p.id}`} data-testid="project" data-name={p.name}>
      <header className={styles.projectHeader}>
        <h2>{p.name}</h2>
        <span className="muted" data-testid="project-source">
          {sourceText(p.source)}
          {p.runnerLabels.length > 0 && ` · runner labels: ${p.runnerLabels.join(", ")}`}
        </span>
        {!props.primary && (
          <button type="button" onClick={props.newSession} disabled={props.creating} data-testid="project-new-session">
            {props.creating ? "Creating…" : "New session"}
          </button>
        )}
        {!isDefault && (
          <button
            type="button"
            className={styles.remove}
            onClick={props.removeProject}
            disabled={props.removingProject}
            data-testid="project-delete"
            aria-label={`Delete project ${p.name}`}
          >
            {props.removingProject ? "Deleting…" : "Delete project"}
          </button>
        )}
      </header>
      <p className={`muted ${p.workspace?.state === "failed" ? styles.error : ""}`} data-testid="project-workspace">
        Your workspace: {workspaceText(p.workspace)}
      </p>
      {p.sessions.length === 0 && <p className="muted">No sessions yet. Start one to open the IDE.</p>}
      <ul className={styles.list} data-testid={props.primary ? "session-list" : "project-session-list"}>
        {p.sessions.map((s) => (
          <li key={s.id} data-testid="session-item" data-id={s.id}>
            <Link href={`/s/${s.id}`} className={styles.sessionLink}>
              {s.title}
            </Link>
            <span className="muted">
              {s.status} · {new Date(s.updatedAt).toLocaleString()}
            </span>
            <button
              type="button"
              className={styles.remove}
              aria-label={`Delete ${s.title}`}
              title="Delete this session"
              disabled={props.removingSession === s.id}
              onClick={() => props.removeSession(s)}
              data-testid="session-delete"
            >
              Delete
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
