// What each refusal of a single sign-on says, shared by the server (which refuses with the code)
// and the sign-in page (which shows the text): the page that started a sign-in receives only a
// code (`?error=…`) and shows the text for it from here, so no text an IdP sent is ever shown to
// the person. No imports, so the page bundles it.

export const SSO_REFUSALS = {
  sso_domain_not_allowed:
    "Your email address is not in a domain this organization signs in with single sign-on. Ask its admin to allow your domain, or sign in with your password.",
  sso_email_unverified:
    "The identity provider did not confirm that your email address is verified, so Quiver cannot sign you in with it. Verify the address at your identity provider, then try again.",
  sso_account_not_in_org:
    "An account with this email already exists and is not a member of this organization. Ask one of its admins for an invitation, accept it, then sign in with single sign-on.",
  sso_account_unverified:
    "An account with this email already exists, made without an invitation link, so Quiver cannot tell it is yours. Sign in with its password and accept your invitation first, then sign in with single sign-on.",
  sso_account_in_other_orgs:
    "Your account also belongs to other organizations, so this organization's single sign-on cannot sign you in to it: its identity provider vouches only for accounts that belong to this organization alone. Sign in with your password.",
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
