// Proving an org's single sign-on email domains by DNS, as Google Workspace, Slack and GitHub do:
// a domain an org's owners list is a claim (SsoDomainClaim) that admits nobody and finds no org,
// until a TXT record only they were shown, `quiver-verification=<token>` at
// `_quiver-verification.<domain>`, is found in DNS. It then becomes the org's (SsoVerifiedDomain,
// one org per domain) and joins SsoProvider.domain, the list better-auth's plugin signs in by.
// Without this, the first org to save a domain (a squatter's) held it: people of that domain were
// sent to its IdP, and the domain's real owner could not set up single sign-on at all.
// The token is an HMAC of the org and the domain under the data folder's key, so it is stable,
// needs no column, and one org's record proves nothing for another.
import { createHmac } from "node:crypto";
import { Resolver } from "node:dns/promises";
import { deriveKey } from "../auth/crypto";
import type { Db } from "../db";

const VERIFICATION_LABEL = "_quiver-verification";
const VALUE_PREFIX = "quiver-verification=";

/** The TXT record that proves `domain` is the org's: where it goes and what it says. */
export interface DomainRecord {
  name: string;
  value: string;
}

export function domainRecord(key: Buffer, orgId: string, domain: string): DomainRecord {
  const token = createHmac("sha256", deriveKey(key, "sso-domain-verification"))
    .update(`${orgId}\n${domain}`)
    .digest("base64url")
    .slice(0, 32);
  return { name: `${VERIFICATION_LABEL}.${domain}`, value: `${VALUE_PREFIX}${token}` };
}

/** The TXT strings at a name, each record's chunks joined; rejects with the DNS error (its `code`). */
export type TxtLookup = (name: string) => Promise<string[]>;

/** Looks TXT records up through `servers` (`ip` or `ip:port`), or the machine's resolvers when none are given. */
export function dnsTxtLookup(servers: string[] = []): TxtLookup {
  const resolver = new Resolver({ timeout: 3_000, tries: 2 });
  if (servers.length > 0) resolver.setServers(servers);
  return async (name) => (await resolver.resolveTxt(name)).map((chunks) => chunks.join(""));
}

/** What a look-up of a domain's record found. `answered`: DNS answered, without the record (a
 *  DNS that did not answer proves nothing either way). */
export type RecordCheck = { found: true } | { found: false; answered: boolean; message: string };

/** Whether DNS holds `record` now; otherwise what the person should know, in words. */
export async function checkRecord(lookup: TxtLookup, record: DomainRecord): Promise<RecordCheck> {
  let values: string[];
  try {
    values = await lookup(record.name);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOTFOUND" || code === "ENODATA")
      return {
        found: false,
        answered: true,
        message: `No TXT record at ${record.name} yet. Add it at your DNS provider; a new record can take a few minutes to appear.`,
      };
    return {
      found: false,
      answered: false,
      message: `DNS did not answer for ${record.name} (${code ?? (err as Error).message}); try again.`,
    };
  }
  if (values.some((v) => v.trim() === record.value)) return { found: true };
  return {
    found: false,
    answered: true,
    message: `The TXT records at ${record.name} do not include ${record.value} (found ${values.length}: another org's, or an old one?).`,
  };
}

/** The domains DNS proved `orgId`'s, oldest first (SsoVerifiedDomain is the truth; SsoProvider.domain
 *  the copy better-auth's plugin finds an org by). */
export async function provenDomains(db: Pick<Db, "ssoVerifiedDomain">, orgId: string): Promise<string[]> {
  const rows = await db.ssoVerifiedDomain.findMany({
    where: { organizationId: orgId },
    orderBy: { verifiedAt: "asc" },
  });
  return rows.map((d) => d.domain);
}

/** Whether DNS proved `domain` `orgId`'s: what a sign-in through the org's provider asks. */
export async function holdsDomain(db: Pick<Db, "ssoVerifiedDomain">, orgId: string, domain: string): Promise<boolean> {
  const row = await db.ssoVerifiedDomain.findUnique({ where: { domain }, select: { organizationId: true } });
  return row?.organizationId === orgId;
}
