"use client";
// Git credentials: a person stores one per git server (host, user name, token) — or per
// repository path on it, given as a URL with a path — for clone, fetch, pull and push from the IDE
// and for the agent's git_push. The token is sent once, here, and never
// shown again: the list shows it masked (its last four characters). Delete removes it at once.
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import styles from "../policy/policy.module.css";

export default function GitSettingsPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.git.credentials.queryOptions());
  const [host, setHost] = useState("");
  const [username, setUsername] = useState("");
  const [token, setToken] = useState("");
  const [saved, setSaved] = useState<string>();
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.git.credentials.queryKey() });
  const save = useMutation(
    trpc.git.saveCredential.mutationOptions({
      onSuccess: async (c) => {
        // The token leaves the page's state as soon as the server has it.
        setToken("");
        setSaved(
          `Saved for ${c.scope ? `repositories under ${c.target}` : `every repository on ${c.host}`} (${c.username}, ${c.masked}).`,
        );
        await refresh();
      },
    }),
  );
  const remove = useMutation(trpc.git.removeCredential.mutationOptions({ onSuccess: () => refresh() }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSaved(undefined);
    save.mutate({ host, username, token });
  };

  return (
    <main className={styles.page} data-testid="git-settings">
      <header className={styles.header}>
        <h1>Git credentials</h1>
        <Link href="/">Home</Link>
      </header>
      <p className="muted">
        One per git server, used over HTTPS for clone, fetch, pull and push (the Changes panel, and the agent&apos;s
        git_push when the policy and you allow it). Give a URL with a path (https://github.com/myorg/ or
        github.com/myorg/app) to use it only for repositories under that path; the longest matching path wins. The token
        is kept encrypted and is never shown again, never sent to the model and never written into a workspace. Use a
        token with the least access that works (read for fetch, write for push).
      </p>
      {list.error && <p className={styles.error}>Could not load your credentials: {list.error.message}</p>}
      <table className={styles.rules} data-testid="git-credentials">
        <thead>
          <tr>
            <th>Used for</th>
            <th>User name</th>
            <th>Token</th>
            <th>Last used</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.data?.length === 0 && (
            <tr>
              <td colSpan={5} className="muted">
                No credential stored yet.
              </td>
            </tr>
          )}
          {list.data?.map((c) => (
            <tr key={c.id} data-testid="git-credential" data-host={c.host} data-scope={c.scope}>
              <td className={styles.match}>{c.scope ? `${c.target}/…` : `${c.host} (every repository)`}</td>
              <td>{c.username}</td>
              <td className={styles.match}>{c.masked}</td>
              <td className="muted">{c.lastUsedAt ? new Date(c.lastUsedAt).toLocaleString() : "never"}</td>
              <td>
                <button
                  type="button"
                  onClick={() => remove.mutate({ credentialId: c.id })}
                  disabled={remove.isPending}
                  aria-label={`Delete the credential for ${c.target}`}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {remove.error && <p className={styles.error}>{remove.error.message}</p>}
      <form className={styles.form} onSubmit={submit} data-testid="git-credential-form" autoComplete="off">
        <label>
          Host or repository URL
          <input
            value={host}
            onChange={(e) => setHost(e.target.value)}
            placeholder="github.com or https://github.com/myorg/"
            required
            aria-label="Host"
          />
        </label>
        <label>
          User name
          <input
            value={username}
            onChange={(e) => setUsername(e.target.value)}
            placeholder="your-login"
            required
            aria-label="User name"
          />
        </label>
        <label>
          Token
          <input
            type="password"
            value={token}
            onChange={(e) => setToken(e.target.value)}
            required
            aria-label="Token"
            autoComplete="new-password"
          />
        </label>
        <div className={styles.formActions}>
          <button type="submit" className={styles.primary} disabled={save.isPending}>
            {save.isPending ? "Saving…" : "Save credential"}
          </button>
        </div>
      </form>
      {save.error && (
        <p className={styles.error} data-testid="git-credential-error">
          {save.error.message}
        </p>
      )}
      {saved && !save.error && (
        <p className={styles.ok} data-testid="git-credential-saved">
          {saved}
        </p>
      )}
    </main>
  );
}
