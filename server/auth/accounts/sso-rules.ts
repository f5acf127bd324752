// The small rules of single sign-on: allowed email domains, typed and stored. What each refusal
// of an SSO sign-in says is in protocol/sso-refusals.ts, which the sign-in page shares.

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
