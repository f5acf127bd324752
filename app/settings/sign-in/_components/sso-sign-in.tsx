"use client";
// "Sign in with SSO" for the sign-in page: an email address (its domain finds the org's identity
// provider) or an org's slug, then off to the IdP. A sign-in the server refused comes back as
// `?sso=failed&error=<code>`; the text shown is Quiver's own for that code (protocol/sso-refusals.ts), never
// what the IdP or the address bar says.
import { useEffect, useState } from "react";
import { ssoErrorText } from "../../../../server/protocol/sso-refusals";

export function SsoSignIn({ callbackURL = "/" }: { callbackURL?: string }) {
  const [who, setWho] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const params = new URLSearchParams(location.search);
    const code = params.get("error");
    if (params.get("sso") === "failed" && code) setError(ssoErrorText(code));
  }, []);

  async function start(e: React.FormEvent) {
    e.preventDefault();
    const text = who.trim();
    if (!text) return setError("Give your work email address or your organization's short name.");
    setBusy(true);
    setError(null);
    try {
      const res = await fetch("/api/auth/sign-in/sso", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          ...(text.includes("@") ? { email: text } : { organizationSlug: text }),
          callbackURL,
          errorCallbackURL: "/signin?sso=failed",
        }),
      });
      const body = (await res.json().catch(() => ({}))) as { url?: string };
      if (res.ok && body.url) return location.assign(body.url);
      setError(
        res.status === 404
          ? "No single sign-on is set up for that email domain or organization."
          : "Single sign-on could not start. Try again in a moment.",
      );
    } catch {
      setError("The server could not be reached.");
    }
    setBusy(false);
  }

  return (
    <form
      onSubmit={start}
      data-testid="sso-sign-in"
      aria-label="Sign in with SSO"
      style={{ display: "grid", gap: 8, marginTop: 16 }}
    >
      <label style={{ display: "grid", gap: 4 }}>
        Work email or organization
        <input
          value={who}
          onChange={(e) => setWho(e.target.value)}
          placeholder="you@company.com or company-slug"
          autoComplete="email"
          data-testid="sso-who"
        />
      </label>
      <button type="submit" disabled={busy} data-testid="sso-start">
        {busy ? "Opening your identity provider…" : "Sign in with SSO"}
      </button>
      {error && (
        <p role="alert" data-testid="sso-error" style={{ color: "var(--bad)", margin: 0 }}>
          {error}
        </p>
      )}
    </form>
  );
}
