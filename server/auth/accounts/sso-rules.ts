// The words and the small rules of single sign-on that the server and the pages share (no Node
// imports, so the sign-in page bundles it): allowed email domains, and what each refusal of an
// SSO sign-in says. The page that started a sign-in receives only a code (`?error=…`) and shows
// the text for it from here, so no text an IdP sent is ever shown to the person.

export const SSO_REFUSALS = {
  sso_domain_not_allowed:
    "Your email address is not in a domain this organization signs in with single sign-on. Ask its admin to allow your domain, or sign in with your password.",
  sso_email_unverified:
    "The identity provider did not confirm that your email address is verified, so Quiver cannot sign you in with it. Verify the address at your identity provider, then try again.",
  sso_account_not_in_org:
    "An account with this email already exists and is not a member of this organization. Ask one of its admins for an invitation, accept it, then sign in with single sign-on.",
  sso_provider_unknown: "This organization has no single sign-on set up any more.",
  sso_accounts_off:
    "This server has no accounts yet: its owner creates the first account, then single sign-on can be used.",
} as const;

export type SsoRefusal = keyof typeof SSO_REFUSALS;

/** What the sign-in page says for an `error` code an SSO sign-in came back with. */
export function ssoErrorText(code: string): string {
  if (code in SSO_REFUSALS) return SSO_REFUSALS[code as SsoRefusal];
  // better-auth's own codes (oauth2/link-account, the SSO plugin).
  if (code === "account not linked") return SSO_REFUSALS.sso_email_unverified;
  if (code === "access_denied") return "You did not allow Quiver at the identity provider.";
  if (code === "invalid_state") return "The sign-in took too long or was started in another browser. Try again.";
  if (code === "signup disabled" || code === "unable to create user")
    return "Quiver could not create your account. Ask an admin of your organization for an invitation.";
  return `Single sign-on failed (${code.slice(0, 60)}). Try again, or ask an admin of your organization to test its sign-in settings.`;
}

export const emailDomain = (email: string): string => email.slice(email.lastIndexOf("@") + 1).toLowerCase();

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** Domains as typed (commas, spaces or new lines between), lower-cased, each checked: a list or
 *  the reason it is not one. */
export function normalizeDomains(text: string): { ok: true; domains: string[] } | { ok: false; message: string } {
  const domains = [
    ...new Set(
      text
        .split(/[\s,]+/)
        .map((d) => d.trim().toLowerCase().replace(/^@/, ""))
        .filter(Boolean),
    ),
  ];
  if (domains.length === 0) return { ok: false, message: "Give at least one email domain (e.g. example.com)." };
  if (domains.length > 50) return { ok: false, message: "At most 50 email domains." };
  const bad = domains.find((d) => !DOMAIN.test(d));
  if (bad) return { ok: false, message: `"${bad.slice(0, 80)}" is not a domain name (e.g. example.com).` };
  return { ok: true, domains };
}

/** The stored form (the plugin's `domain` column: comma-separated) read back. */
export const parseDomains = (stored: string): string[] =>
  stored
    .split(",")
    .map((d) => d.trim().toLowerCase())
    .filter(Boolean);
