"use client";
// "New project": a name and where its files come from — empty, a git repository (HTTPS URL and
// an optional branch), or an uploaded archive (.zip / .tar.gz) — and, optionally, the runner
// labels its workspaces need (e.g. gpu). The server places the creator's workspace at once.
import Link from "next/link";
import { useState } from "react";
import { useMutation } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { uploadArchive } from "./archive-upload";
import styles from "../../home.module.css";

type Kind = "empty" | "git" | "archive";

export function NewProjectForm(props: { onDone(projectId?: string): void; onCancel(): void }) {
  const trpc = useTRPC();
  const [name, setName] = useState("");
  const [kind, setKind] = useState<Kind>("empty");
  const [url, setUrl] = useState("");
  const [branch, setBranch] = useState("");
  const [file, setFile] = useState<File | null>(null);
  const [labels, setLabels] = useState("");
  const [uploadError, setUploadError] = useState<string | null>(null);
  const [uploading, setUploading] = useState(false);
  const create = useMutation(trpc.projects.create.mutationOptions({ onSuccess: (p) => props.onDone(p.id) }));

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setUploadError(null);
    const runnerLabels = labels.split(/[\s,]+/).filter(Boolean);
    let source: { kind: "empty" } | { kind: "git"; url: string; branch?: string } | { kind: "archive"; name: string } =
      { kind: "empty" };
    if (kind === "git") source = { kind: "git", url: url.trim(), ...(branch.trim() ? { branch: branch.trim() } : {}) };
    if (kind === "archive") {
      if (!file) return setUploadError("Choose a .zip or .tar.gz file.");
      setUploading(true);
      try {
        source = { kind: "archive", name: await uploadArchive(file) };
      } catch (err) {
        return setUploadError((err as Error).message);
      } finally {
        setUploading(false);
      }
    }
    create.mutate({ name: name.trim(), source, ...(runnerLabels.length ? { runnerLabels } : {}) });
  }

  const busy = uploading || create.isPending;
  return (
    <form className={styles.form} onSubmit={(e) => void submit(e)} data-testid="new-project-form">
      <label>
        Name
        <input
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={100}
          autoFocus
          data-testid="project-name"
        />
      </label>
      <fieldset>
        <legend className="muted">Files from</legend>
        {(["empty", "git", "archive"] as const).map((k) => (
          <label key={k} style={{ display: "flex", gap: 4 }}>
            <input
              type="radio"
              name="source"
              value={k}
              checked={kind === k}
              onChange={() => setKind(k)}
              data-testid={`project-source-${k}`}
            />
            {k === "empty" ? "Empty" : k === "git" ? "Git repository" : "Archive upload"}
          </label>
        ))}
      </fieldset>
      {kind === "git" && (
        <>
          <label>
            Repository URL (HTTPS)
            <input
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              required
              placeholder="https://example.com/team/repo.git"
              data-testid="project-git-url"
            />
          </label>
          <label>
            Branch (empty: the repository&apos;s default)
            <input value={branch} onChange={(e) => setBranch(e.target.value)} data-testid="project-git-branch" />
          </label>
          <p className="muted" data-testid="project-git-credential-hint">
            A private repository is cloned with your stored credential for its host: add one under{" "}
            <Link href="/settings/git">Git credentials</Link> first.
          </p>
        </>
      )}
      {kind === "archive" && (
        <label>
          Archive (.zip, .tar.gz)
          <input
            type="file"
            accept=".zip,.tar.gz,.tgz,.tar"
            onChange={(e) => setFile(e.target.files?.[0] ?? null)}
            data-testid="project-archive"
          />
        </label>
      )}
      <label>
        Runner labels (optional, e.g. gpu)
        <input value={labels} onChange={(e) => setLabels(e.target.value)} data-testid="project-labels" />
      </label>
      {(uploadError || create.error) && (
        <p className={styles.error} data-testid="new-project-error">
          {uploadError ?? create.error?.message}
        </p>
      )}
      <div className={styles.formActions}>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="submit" disabled={busy} data-testid="project-create">
          {busy ? "Creating…" : "Create project"}
        </button>
      </div>
    </form>
  );
}
