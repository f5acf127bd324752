"use client";
// A forgotten password: ask for a reset link (mailed, or in the server's log when no mail server
// is set), then, opened from that link (?token=…), choose a new one. Every device is signed out.
import Link from "next/link";
import { Suspense, useState, type FormEvent } from "react";
import { useSearchParams } from "next/navigation";
import { authCall } from "../auth-client";
import styles from "../auth.module.css";

function ResetForm() {
  const params = useSearchParams();
  const token = params.get("token");
  const linkError = params.get("error");
  const [state, setState] = useState<{ error?: string; done?: string; busy?: boolean }>({});

  async function request(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const email = String(new FormData(e.currentTarget).get("email"));
    setState({ busy: true });
    try {
      await authCall("/request-password-reset", { email, redirectTo: "/signin/reset" });
      setState({
        done: "If an account has this email, a reset link is on its way (or in the server's log, when it sends no mail).",
      });
    } catch (err) {
      setState({ error: (err as Error).message });
    }
  }

  async function reset(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    if (form.get("password") !== form.get("again")) return setState({ error: "The two passwords differ." });
    setState({ busy: true });
    try {
      await authCall("/reset-password", { token, newPassword: String(form.get("password")) });
      setState({ done: "Your password is changed and every device is signed out. Sign in with the new one." });
    } catch (err) {
      setState({ error: (err as Error).message });
    }
  }

  return (
    <main className={styles.page} data-testid="reset-page">
      <h1>{token ? "Choose a new password" : "Reset your password"}</h1>
      {linkError && (
        <p className={styles.error} role="alert">
          This reset link is not valid any more; ask for a new one.
        </p>
      )}
      {state.done ? (
        <p className={styles.ok} role="status" data-testid="reset-done">
          {state.done}
        </p>
      ) : token && !linkError ? (
        <form className={styles.form} onSubmit={reset}>
          <label>
            New password
            <input name="password" type="password" autoComplete="new-password" minLength={10} required />
          </label>
          <label>
            New password again
            <input name="again" type="password" autoComplete="new-password" minLength={10} required />
          </label>
          {state.error && (
            <p className={styles.error} role="alert">
              {state.error}
            </p>
          )}
          <button type="submit" className={styles.primary} disabled={state.busy}>
            Set the password
          </button>
        </form>
      ) : (
        <form className={styles.form} onSubmit={request}>
          <label>
            Email
            <input name="email" type="email" autoComplete="username" required />
          </label>
          {state.error && (
            <p className={styles.error} role="alert">
              {state.error}
            </p>
          )}
          <button type="submit" className={styles.primary} disabled={state.busy}>
            Send a reset link
          </button>
        </form>
      )}
      <p className={styles.links}>
        <Link href="/signin">Sign in</Link>
      </p>
    </main>
  );
}

export default function ResetPage() {
  return (
    <Suspense>
      <ResetForm />
    </Suspense>
  );
}
