"use client";
// The org's disk limit for each workspace (admins and owners change it; members see it). Writes
// past it fail naming it; a workspace already open gets a new limit when it is next opened.
import Link from "next/link";
import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { formatBytes } from "../../_components/disk-usage";
import styles from "../policy/policy.module.css";

export default function DiskLimitPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const limits = useQuery(trpc.uploads.limits.queryOptions());
  const [gb, setGb] = useState<string | null>(null);
  const save = useMutation(
    trpc.uploads.setDiskLimit.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.uploads.pathKey() });
        setGb(null);
      },
    }),
  );
  if (limits.isPending) return <main className={styles.page}>Loading…</main>;
  if (limits.error)
    return (
      <main className={styles.page}>
        <p className={styles.error}>Could not load the disk limit: {limits.error.message}</p>
      </main>
    );
  const info = limits.data;
  const shown = gb ?? String(+(info.limitBytes / 1024 ** 3).toFixed(2));
  const mb = Math.round(Number(shown) * 1024);
  const valid = Number.isFinite(mb) && mb >= 1;
  return (
    <main className={styles.page} data-testid="disk-limit-page">
      <header className={styles.header}>
        <h1>Workspace disk limit</h1>
        <Link href="/">Sessions</Link>
      </header>
      <p className="muted">
        Each workspace of this org may hold {formatBytes(info.limitBytes)}
        {info.limitMb === null ? " (the default)" : ""}. Writes past it — file edits, the agent&apos;s commands,
        terminals — fail with a message naming the limit. Uploaded archives may be up to{" "}
        {formatBytes(info.uploadMaxBytes)}.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (valid) save.mutate({ limitMb: mb });
        }}
      >
        <label>
          Limit per workspace (GB){" "}
          <input
            data-testid="disk-limit-gb"
            type="number"
            min="0.001"
            step="0.1"
            value={shown}
            onChange={(e) => setGb(e.target.value)}
          />
        </label>{" "}
        <button type="submit" disabled={!valid || save.isPending || gb === null}>
          Save
        </button>{" "}
        <button
          type="button"
          disabled={info.limitMb === null || save.isPending}
          onClick={() => save.mutate({ limitMb: null })}
        >
          Use the default ({formatBytes(info.defaultMb * 1024 ** 2)})
        </button>
      </form>
      {save.error && (
        <p className={styles.error} data-testid="disk-limit-error">
          {save.error.message}
        </p>
      )}
    </main>
  );
}
