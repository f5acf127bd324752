"use client";
// An invitation link: says which org, role and email it is for, then lets the person join. A
// signed-in person with the invited email joins with one click (the org becomes their active
// one); someone else signed in is told whose link it is; someone signed out creates their
// account through the link (/signup with the invitation: the email is the invited one) or signs
// in and comes back here. An expired, used or revoked link says so.
import { use } from "react";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import styles from "./invite.module.css";

export default function InvitePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = use(params);
  const trpc = useTRPC();
  const info = useQuery(trpc.orgs.invitation.queryOptions({ token }, { retry: false }));
  const who = useQuery(trpc.auth.whoami.queryOptions(undefined, { retry: false }));
  const signedIn = who.data?.kind === "member";
  const mine = useQuery(trpc.orgs.mine.queryOptions(undefined, { retry: false, enabled: signedIn }));
  const accept = useMutation(trpc.orgs.accept.mutationOptions({ onSuccess: () => location.assign("/") }));
  const back = `/invite/${encodeURIComponent(token)}`;

  if (info.isPending || who.isPending) return <main className={styles.page}>Loading the invitation…</main>;
  if (info.error) {
    return (
      <main className={styles.page} data-testid="invite-page" data-state="invalid">
        <h1>Invitation</h1>
        <p className={styles.error}>{info.error.message}</p>
      </main>
    );
  }
  const inv = info.data;
  const myEmail = mine.data?.me.email;
  const sameEmail = myEmail !== undefined && myEmail.toLowerCase() === inv.email;
  return (
    <main className={styles.page} data-testid="invite-page" data-state={inv.state}>
      <h1>Join {inv.orgName}</h1>
      <p>
        {inv.invitedBy || "A teammate"} invited <strong>{inv.email}</strong> to {inv.orgName} as{" "}
        {inv.role === "member" ? "a member" : `an ${inv.role}`}.
      </p>
      {inv.state === "expired" && (
        <p className={styles.error}>
          This invitation has expired: ask {inv.invitedBy || "whoever invited you"} for a new one.
        </p>
      )}
      {inv.state === "accepted" && <p className={styles.error}>This invitation has already been used.</p>}
      {inv.state === "revoked" && <p className={styles.error}>This invitation was revoked.</p>}
      {inv.state === "pending" && signedIn && (
        <>
          {myEmail !== undefined && !sameEmail && (
            <p className={styles.error} data-testid="invite-wrong-email">
              You are signed in as {myEmail}, but this invitation is for {inv.email}. <a href="/signout">Sign out</a>,
              then open this link again.
            </p>
          )}
          <button
            type="button"
            className={styles.primary}
            disabled={accept.isPending || !sameEmail}
            onClick={() => accept.mutate({ token })}
            data-testid="invite-accept"
          >
            {accept.isPending ? "Joining…" : `Join ${inv.orgName}`}
          </button>
        </>
      )}
      {inv.state === "pending" && !signedIn && (
        <div className={styles.choices}>
          <a
            className={styles.primary}
            href={`/signup?invitation=${encodeURIComponent(token)}&next=${encodeURIComponent(back)}`}
            data-testid="invite-signup"
          >
            Create my account
          </a>
          <a href={`/signin?next=${encodeURIComponent(back)}`} data-testid="invite-signin">
            I have an account: sign in
          </a>
        </div>
      )}
      {accept.error && (
        <p className={styles.error} role="alert" data-testid="invite-error">
          {accept.error.message}
        </p>
      )}
    </main>
  );
}
