"use client";
// The org switcher of the home and IDE headers: the active org, a select of the person's other
// orgs (and "New org…"), and the way to its members. Switching makes the other org active for
// this sign-in: the server closes the person's sockets in the old org, this tab goes home (the
// other org's sessions), and the browser's other tabs of Quiver reload, so every open page acts
// in the org that is active now. Shows nothing to whoever is not a member (a share link's viewer).
import Link from "next/link";
import { useEffect } from "react";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../_lib/trpc";
import styles from "./org-switcher.module.css";

const CHANNEL = "quiver-active-org";
const NEW_ORG = "\u0000new";
/** This page's name on the channel: a BroadcastChannel also hears what its own page sent. */
const THIS_PAGE = typeof crypto !== "undefined" && "randomUUID" in crypto ? crypto.randomUUID() : String(Math.random());

/** Tells the other tabs that the active org changed (they reload to follow it). */
function announce(orgId: string) {
  if (typeof BroadcastChannel === "undefined") return;
  const channel = new BroadcastChannel(CHANNEL);
  channel.postMessage({ orgId, from: THIS_PAGE });
  channel.close();
}

export function OrgSwitcher() {
  const trpc = useTRPC();
  const mine = useQuery(trpc.orgs.mine.queryOptions(undefined, { retry: false, staleTime: 30_000 }));
  const activeOrgId = mine.data?.activeOrgId;
  const switchOrg = useMutation(
    trpc.orgs.switch.mutationOptions({
      onSuccess: (org) => {
        announce(org.id);
        location.assign("/");
      },
    }),
  );
  const create = useMutation(
    trpc.orgs.create.mutationOptions({ onSuccess: (org) => switchOrg.mutate({ orgId: org.id }) }),
  );

  // Another tab switched: whatever this page shows may belong to the old org. It reloads on every
  // switch heard, whatever org it thinks is active: its answers to different questions may straddle
  // the switch (the org list from after it, the session list from before), so no one answer can
  // tell whether the page is current. Listened for from the first render, so a switch announced
  // while this page's questions are on their way is heard too.
  useEffect(() => {
    if (typeof BroadcastChannel === "undefined") return;
    const channel = new BroadcastChannel(CHANNEL);
    channel.onmessage = (e: MessageEvent<{ orgId?: string; from?: string }>) => {
      if (e.data?.orgId && e.data.from !== THIS_PAGE) location.reload();
    };
    return () => channel.close();
  }, []);

  if (!mine.data) return null;
  const { orgs, accounts } = mine.data;
  const active = orgs.find((o) => o.id === activeOrgId);
  const error = switchOrg.error ?? create.error;
  return (
    <span className={styles.switcher} data-testid="org-switcher">
      {accounts ? (
        <select
          aria-label="Organization"
          value={activeOrgId}
          disabled={switchOrg.isPending || create.isPending}
          onChange={(e) => {
            const value = e.target.value;
            if (value !== NEW_ORG) return switchOrg.mutate({ orgId: value });
            e.target.value = activeOrgId ?? "";
            const name = prompt("Name of the new org:");
            if (name?.trim()) create.mutate({ name });
          }}
          data-testid="org-select"
        >
          {orgs.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
          <option value={NEW_ORG}>New org…</option>
        </select>
      ) : (
        <span className={styles.name}>{active?.name}</span>
      )}
      <Link href="/settings/members" className={styles.members} data-testid="members-link">
        Members
      </Link>
      {error && (
        <span className={styles.error} role="alert">
          {error.message}
        </span>
      )}
    </span>
  );
}
