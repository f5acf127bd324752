"use client";
// Sign in with an email and a password (server/auth/accounts). Too many failures for an account
// or from an address are refused for a while, with the server's message saying so.
import Link from "next/link";
import { Suspense, useState, type FormEvent } from "react";
import { useSearchParams } from "next/navigation";
import { authCall, safeNext } from "./auth-client";
import { SsoSignIn } from "../settings/sign-in/_components/sso-sign-in";
import styles from "./auth.module.css";

function SignInForm() {
  const params = useSearchParams();
  const next = safeNext(params.get("next"));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    try {
      await authCall("/sign-in/email", { email: String(form.get("email")), password: String(form.get("password")) });
      // A full load: every page and socket starts again as the person.
      window.location.assign(next);
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  }

  return (
    <main className={styles.page} data-testid="signin-page">
      <h1>Sign in to Quiver</h1>
      <form className={styles.form} onSubmit={submit}>
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required autoFocus />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        {error && (
          <p className={styles.error} role="alert" data-testid="signin-error">
            {error}
          </p>
        )}
        <button type="submit" className={styles.primary} disabled={busy}>
          Sign in
        </button>
      </form>
      <SsoSignIn callbackURL={next} />
      <p className={styles.links}>
        <Link href="/signin/reset">Forgot your password?</Link>
        <Link href="/signup">Create an account</Link>
      </p>
    </main>
  );
}

export default function SignInPage() {
  return (
    <Suspense>
      <SignInForm />
    </Suspense>
  );
}
