"use client";
// The org's sign-in settings (owners change them; admins read and test them): its OpenID Connect identity provider (issuer,
// client id, client secret, allowed email domains and their DNS proof), the redirect URI to register at the IdP,
// "Test the connection" (the issuer's discovery document, fetched and checked by the server) and
// Remove. A stored client secret is never shown: the box stays empty and saving it empty keeps it.
import Link from "next/link";
import { useEffect, useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { SsoDomainList } from "./_components/sso-domain-list";
import styles from "./sign-in.module.css";

export default function SignInSettingsPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const settings = useQuery(trpc.sso.get.queryOptions());
  const [issuer, setIssuer] = useState("");
  const [clientId, setClientId] = useState("");
  const [clientSecret, setClientSecret] = useState("");
  const [domains, setDomains] = useState("");
  const [saved, setSaved] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.sso.pathKey() });
  const save = useMutation(
    trpc.sso.save.mutationOptions({ onSuccess: async () => (setClientSecret(""), setSaved(true), await refresh()) }),
  );
  const test = useMutation(trpc.sso.test.mutationOptions());
  const remove = useMutation(trpc.sso.remove.mutationOptions({ onSuccess: refresh }));

  // The form starts from what is saved (again after each save or removal).
  const data = settings.data;
  useEffect(() => {
    if (!data) return;
    setIssuer(data.issuer);
    setClientId(data.clientId);
    setDomains(data.domains.join(", "));
  }, [data]);

  if (settings.isPending) return <main className={styles.page}>Loading the sign-in settings…</main>;
  if (settings.error || !data) {
    return (
      <main className={styles.page}>
        <p className={styles.error} data-testid="sso-settings-error">
          {settings.error?.data?.code === "FORBIDDEN"
            ? "Only the organization's owners and admins can see its sign-in settings."
            : `Could not load the sign-in settings: ${settings.error?.message}`}
        </p>
        <Link href="/">Sessions</Link>
      </main>
    );
  }
  const redirectUri = typeof location === "undefined" ? data.callbackPath : `${location.origin}${data.callbackPath}`;
  const failure = save.error ?? remove.error ?? test.error;
  const edit = (set: (v: string) => void) => (e: React.ChangeEvent<HTMLInputElement>) => (
    setSaved(false),
    set(e.target.value)
  );

  return (
    <main className={styles.page} data-testid="sso-settings">
      <header className={styles.header}>
        <h1>Sign-in settings</h1>
        <Link href="/settings/members">Members</Link>
        <Link href="/">Sessions</Link>
      </header>
      <p className="muted">
        Single sign-on with OpenID Connect (Google Workspace, Okta, Entra ID, Keycloak…). People whose email is in an
        allowed domain (proven by DNS) and verified by the identity provider sign in with &ldquo;Sign in with SSO&rdquo;
        on the sign-in page, by their email or by this organization&rsquo;s name <code>{data.orgSlug}</code>. Someone
        new joins as a member; an existing account is linked only if that person is already a member or invited.
      </p>
      {!data.accountsOn && (
        <p className={styles.error} data-testid="sso-accounts-off">
          This server runs without accounts: <a href="/signup">create the first account</a> before setting up single
          sign-on.
        </p>
      )}
      <p>Register this redirect URI for Quiver at the identity provider:</p>
      <div className={styles.copy} data-testid="sso-redirect-uri">
        {redirectUri}
      </div>
      <form
        className={styles.form}
        onSubmit={(e) => (
          e.preventDefault(),
          save.mutate({ issuer, clientId, clientSecret: clientSecret || undefined, domains })
        )}
      >
        <label>
          Issuer URL
          <input
            value={issuer}
            onChange={edit(setIssuer)}
            placeholder="https://accounts.example.com"
            data-testid="sso-issuer"
          />
        </label>
        <label>
          Client ID
          <input value={clientId} onChange={edit(setClientId)} data-testid="sso-client-id" />
        </label>
        <label>
          Client secret
          <input
            type="password"
            value={clientSecret}
            onChange={edit(setClientSecret)}
            autoComplete="off"
            placeholder={data.hasClientSecret ? "stored (leave empty to keep it)" : ""}
            data-testid="sso-client-secret"
          />
        </label>
        <label>
          Allowed email domains
          <input
            value={domains}
            onChange={edit(setDomains)}
            placeholder="example.com, example.org"
            data-testid="sso-domains"
          />
        </label>
        <div className={styles.bar}>
          <button
            type="submit"
            className={styles.primary}
            disabled={save.isPending || !data.changeable}
            data-testid="sso-save"
          >
            {save.isPending ? "Checking the issuer…" : "Save"}
          </button>
          <button
            type="button"
            disabled={test.isPending || !issuer.trim()}
            onClick={() => test.mutate({ issuer })}
            data-testid="sso-test"
          >
            {test.isPending ? "Testing…" : "Test the connection"}
          </button>
          {data.configured && (
            <button
              type="button"
              disabled={remove.isPending || !data.changeable}
              data-testid="sso-remove"
              onClick={() =>
                confirm(
                  "Remove single sign-on? Accounts linked through it are unlinked; people sign in with their passwords.",
                ) && remove.mutate()
              }
            >
              Remove
            </button>
          )}
          {saved && !save.isPending && (
            <span className={styles.ok} data-testid="sso-saved">
              Saved.
            </span>
          )}
        </div>
      </form>
      <SsoDomainList domains={data.domainStatus} changeable={data.changeable} />
      {!data.changeable && (
        <p className={styles.note} data-testid="sso-owners-only">
          Only the organization&apos;s owners can change its single sign-on: whoever sets its identity provider can sign
          in as its members. You can read the settings and test the connection.
        </p>
      )}
      {failure && (
        <p className={styles.error} role="alert" data-testid="sso-failure">
          {failure.message}
        </p>
      )}
      {test.data && (
        <div data-testid="sso-test-result" className={test.data.ok ? styles.ok : styles.error}>
          {test.data.ok ? `The issuer answers: its discovery document names ${test.data.issuer}.` : test.data.message}
          {test.data.ok && (
            <ul className={styles.endpoints}>
              <li>authorization: {test.data.authorizationEndpoint}</li>
              <li>token: {test.data.tokenEndpoint}</li>
              <li>keys: {test.data.jwksEndpoint}</li>
              {test.data.userInfoEndpoint && <li>userinfo: {test.data.userInfoEndpoint}</li>}
            </ul>
          )}
        </div>
      )}
      {data.configured && data.updatedAt && <p className="muted">Saved {new Date(data.updatedAt).toLocaleString()}.</p>}
    </main>
  );
}
