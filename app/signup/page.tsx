"use client";
// Creating an account. Three cases, told apart by the server's mode (/api/auth/mode):
//  - no account yet: the first owner, who takes over this server's local data (from this
//    machine, or with the one-time ?setup= URL the server printed);
//  - ?invitation=<token>: the invited email (from orgs.invitation), then the invitation page;
//  - open sign-up (QUIVER_SIGNUP=open): anyone, with an org of their own.
import Link from "next/link";
import { Suspense, useEffect, useState, type FormEvent } from "react";
import { useSearchParams } from "next/navigation";
import { authCall, type AuthMode } from "../signin/auth-client";
import styles from "../signin/auth.module.css";

interface InvitationInfo {
  orgName: string;
  email: string;
  role: string;
  state: string;
}

async function invitationInfo(token: string): Promise<InvitationInfo | null> {
  const res = await fetch(`/api/trpc/orgs.invitation?input=${encodeURIComponent(JSON.stringify({ token }))}`);
  if (!res.ok) return null;
  return ((await res.json()) as { result?: { data?: InvitationInfo } }).result?.data ?? null;
}

function SignUpForm() {
  const params = useSearchParams();
  const setup = params.get("setup");
  const invitation = params.get("invitation");
  const [mode, setMode] = useState<AuthMode | null>(null);
  const [invited, setInvited] = useState<InvitationInfo | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    authCall<AuthMode>("/mode").then(setMode, (err: Error) => setError(err.message));
    if (invitation) invitationInfo(invitation).then(setInvited, () => setInvited(null));
  }, [invitation]);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    if (form.get("password") !== form.get("again")) return setError("The two passwords differ.");
    const person = {
      name: String(form.get("name")),
      email: invited?.email ?? String(form.get("email")),
      password: String(form.get("password")),
    };
    setBusy(true);
    setError(null);
    try {
      if (mode?.firstOwner) await authCall("/first-owner", { ...person, setup: setup ?? undefined });
      // The link's token admits the invited address; the address alone does not.
      else await authCall("/sign-up/email", invitation ? { ...person, invitation } : person);
      window.location.assign(invitation ? `/invite/${encodeURIComponent(invitation)}` : "/");
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  }

  if (!mode) return <main className={styles.page}>{error ? <p className={styles.error}>{error}</p> : "Loading…"}</main>;
  const closed = !mode.firstOwner && !invitation && mode.signUp !== "open";
  return (
    <main className={styles.page} data-testid="signup-page" data-first-owner={mode.firstOwner ? "yes" : "no"}>
      <h1>{mode.firstOwner ? "Create the first owner" : "Create an account"}</h1>
      {mode.firstOwner && (
        <p className="muted">
          This server has no account yet. The first one owns it: the sessions, policies and history made so far become
          theirs, and from then on everyone signs in.
        </p>
      )}
      {invited && (
        <p className="muted" data-testid="signup-invitation">
          You are invited to {invited.orgName} as {invited.role}.
        </p>
      )}
      {closed ? (
        <p data-testid="signup-closed">
          Accounts on this server are by invitation: ask an org admin for an invitation link.
        </p>
      ) : (
        <form className={styles.form} onSubmit={submit}>
          <label>
            Name
            <input name="name" autoComplete="name" maxLength={100} required autoFocus />
          </label>
          <label>
            Email
            {invited ? (
              <input name="email" type="email" value={invited.email} readOnly aria-readonly />
            ) : (
              <input name="email" type="email" autoComplete="username" required />
            )}
          </label>
          <label>
            Password
            <input
              name="password"
              type="password"
              autoComplete="new-password"
              minLength={10}
              maxLength={256}
              required
            />
          </label>
          <label>
            Password again
            <input name="again" type="password" autoComplete="new-password" minLength={10} maxLength={256} required />
          </label>
          {error && (
            <p className={styles.error} role="alert" data-testid="signup-error">
              {error}
            </p>
          )}
          <button type="submit" className={styles.primary} disabled={busy}>
            Create account
          </button>
        </form>
      )}
      <p className={styles.links}>
        <Link href="/signin">I have an account</Link>
      </p>
    </main>
  );
}

export default function SignUpPage() {
  return (
    <Suspense>
      <SignUpForm />
    </Suspense>
  );
}
