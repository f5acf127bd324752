"use client";
// The org switcher of the home and IDE headers: the active org, a select of the person's other
// orgs (and "New org…"), and the way to its members. Switching makes the other org active for
// this sign-in: the server closes the person's sockets in the old org, this tab goes home (the
// other org's sessions), and the browser's other tabs of Quiver reload, so every open page acts
// in the org that is active now. Shows nothing to whoever is not a member (a share link's viewer).
import Link from "next/link";
import { useEffect, useRef } from "react";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../_lib/trpc";
import styles from "./org-switcher.module.css";

const CHANNEL = "quiver-active-org";
const NEW_ORG = "\u0000new";

/** Tells the other tabs that the active org changed (they reload to follow it). */
function announce(orgId: string) {
  if (typeof BroadcastChannel === "undefined") return;
  const channel = new BroadcastChannel(CHANNEL);
  channel.postMessage({ orgId });
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

  // Another tab switched: this page's data belongs to the old org. Listened for from the first
  // render, not once the active org is known: a switch announced while this tab's own question
  // was on its way (its answer perhaps from before the switch) would otherwise go unheard.
  const known = useRef<{ activeOrgId?: string; refetch(): Promise<unknown> }>({ refetch: async () => undefined });
  known.current = { activeOrgId, refetch: mine.refetch };
  useEffect(() => {
    if (typeof BroadcastChannel === "undefined") return;
    const channel = new BroadcastChannel(CHANNEL);
    channel.onmessage = (e: MessageEvent<{ orgId?: string }>) => {
      const orgId = e.data?.orgId;
      if (!orgId) return;
      const { activeOrgId: shown, refetch } = known.current;
      if (shown === undefined) void refetch();
      else if (orgId !== shown) location.reload();
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
