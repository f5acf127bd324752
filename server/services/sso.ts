// An org's single sign-on settings (the /settings/sign-in page, tRPC `sso.*`, owners and admins):
// the OpenID Connect issuer, client id and secret, and the email domains allowed to sign in. The
// settings are the row better-auth's SSO plugin reads (SsoProvider; server/auth/accounts/sso.ts).
// Saving fetches the issuer's discovery document and keeps its endpoints (so a sign-in needs no
// discovery), stores the client secret encrypted and never gives it back. An issuer is fetched
// only when its address is public, or its origin is listed in QUIVER_SSO_PRIVATE_ISSUERS (an
// org admin must not make the server fetch its own network). Removing the settings, or pointing
// them at another issuer, forgets every account linked through them, so a new IdP's subject ids
// can never sign in as the people of the old one.
import { lookup } from "node:dns/promises";
import type { Db } from "../db";
import type { Actor } from "./types";
import { encryptSecret, ssoSecretKey } from "../auth/accounts/sso-secret";
import { normalizeDomains } from "../auth/accounts/sso-rules";
import {
  checkRecord,
  dnsTxtLookup,
  domainRecord,
  provenDomains,
  type DomainRecord,
  type RecordCheck,
  type TxtLookup,
} from "./sso-domains";
import { releaseAt } from "./sso-domain-recheck";

// better-auth's SSO package (samlify, xml-crypto …) is loaded by the first check of an issuer.
const ssoPackage = () => import("@better-auth/sso");
const hostUtils = () => import("@better-auth/core/utils/host");

/** Whoever sets the org's identity provider can sign in as its members: its owners, not its
 *  admins (an admin could otherwise sign in as an owner). */
export const SSO_OWNERS_ONLY = "Only the organization's owners can change its single sign-on.";
function ownersOnly(actor: { role: string }): void {
  if (actor.role !== "owner") throw new SsoError(SSO_OWNERS_ONLY, "FORBIDDEN");
}

export class SsoError extends Error {
  constructor(
    message: string,
    readonly code: "BAD_REQUEST" | "CONFLICT" | "FORBIDDEN",
  ) {
    super(message);
    this.name = "SsoError";
  }
}

/** A listed email domain: proven by DNS (it admits people) or waiting for its TXT record. */
export interface SsoDomainStatus {
  domain: string;
  verified: boolean;
  /** The TXT record that proves it (sso-domains.ts). */
  record: DomainRecord;
  /** A proven domain whose record the daily look found gone: since when, and when the domain
   *  is given up unless the record is back (sso-domain-recheck.ts). */
  recordMissing?: { since: Date; releaseAt: Date };
}

export interface SsoSettings {
  configured: boolean;
  issuer: string;
  clientId: string;
  /** Every listed domain, verified first (what the settings form shows). */
  domains: string[];
  domainStatus: SsoDomainStatus[];
  /** True once a client secret is stored (it is never sent back). */
  hasClientSecret: boolean;
  /** The path the IdP redirects back to (register `<origin><callbackPath>` as the redirect URI). */
  callbackPath: string;
  /** The org's slug, which "Sign in with SSO" also accepts. */
  orgSlug: string;
  /** False while the server runs without accounts (SSO cannot be saved then). */
  accountsOn: boolean;
  updatedAt: Date | null;
  /** Whether the caller may change them (owners; admins read and test). */
  changeable: boolean;
}

export interface SsoTestResult {
  ok: boolean;
  /** What failed, in words (ok: false). */
  message?: string;
  issuer?: string;
  authorizationEndpoint?: string;
  tokenEndpoint?: string;
  jwksEndpoint?: string;
  userInfoEndpoint?: string;
}

export interface SsoSaveInput {
  issuer: string;
  clientId: string;
  /** Absent or empty: keep the stored one. */
  clientSecret?: string;
  /** Domains as typed (commas or spaces between). */
  domains: string;
}

export interface SsoService {
  get(actor: Actor): Promise<SsoSettings>;
  save(actor: Actor, input: SsoSaveInput): Promise<SsoSettings>;
  /** Fetches and checks the discovery document of `issuer` (default: the saved one). */
  test(actor: Actor, issuer?: string): Promise<SsoTestResult>;
  /** Forgets the settings and the accounts linked through them; false when there were none. */
  remove(actor: Actor): Promise<{ removed: boolean }>;
  /** Looks up a listed domain's TXT record; found, the domain is the org's and admits people. */
  verifyDomain(actor: Actor, domain: string): Promise<{ verified: boolean; message?: string; settings: SsoSettings }>;
}

export interface SsoServiceDeps {
  db: Db;
  /** The data folder's key (auth/crypto.ts). */
  key: Buffer;
  /** Origins (scheme://host:port) of IdPs on loopback or private addresses that may be used. */
  privateIssuers: string[];
  /** Whether accounts are on (auth/accounts): SSO is saved only then, so that it never makes the
   *  server's first account (which takes over the local owner). Absent: on. */
  accountsOn?: () => Promise<boolean>;
  /** How TXT records are looked up (default: the machine's resolvers). */
  txtLookup?: TxtLookup;
}

/** The plugin's provider id of an org (it names the callback path: keep it stable). */
export const ssoProviderId = (orgId: string): string => `org-${orgId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
export const ssoCallbackPath = (orgId: string): string => `/api/auth/sso/callback/${ssoProviderId(orgId)}`;

const SCOPES = ["openid", "email", "profile"];

export function createSsoService(deps: SsoServiceDeps): SsoService {
  const { db } = deps;
  const secretKey = ssoSecretKey(deps.key);
  const listed = (url: string) => deps.privateIssuers.includes(new URL(url).origin);
  const txtLookup = deps.txtLookup ?? dnsTxtLookup();

  /** The issuer as a URL the server may fetch, or an SsoError saying why not. */
  async function checkIssuer(text: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(text.trim());
    } catch {
      throw new SsoError("The issuer must be a URL, e.g. https://accounts.example.com.", "BAD_REQUEST");
    }
    if (url.username || url.password || url.search || url.hash)
      throw new SsoError("The issuer URL takes no user, password, query or fragment.", "BAD_REQUEST");
    const issuer = url.toString().replace(/\/$/, "");
    if (listed(issuer)) return issuer;
    if (url.protocol !== "https:")
      throw new SsoError(
        "The issuer must use https (an IdP on this machine or a private network: list its origin in QUIVER_SSO_PRIVATE_ISSUERS).",
        "BAD_REQUEST",
      );
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const addresses = await lookup(host, { all: true }).catch(() => []);
    if (addresses.length === 0) throw new SsoError(`The issuer's host ${host} does not resolve.`, "BAD_REQUEST");
    const { isPublicRoutableHost } = await hostUtils();
    if (!isPublicRoutableHost(host) || addresses.some((a) => !isPublicRoutableHost(a.address))) {
      throw new SsoError(
        `The issuer's host ${host} is on a private network; the server's operator can allow it by listing ${url.origin} in QUIVER_SSO_PRIVATE_ISSUERS.`,
        "BAD_REQUEST",
      );
    }
    return issuer;
  }

  async function discover(issuer: string) {
    const [{ discoverOIDCConfig, DiscoveryError }, { isPublicRoutableHost }] = await Promise.all([
      ssoPackage(),
      hostUtils(),
    ]);
    // The issuer was checked above; the endpoints it names must be public or listed as well.
    const trusted = (u: string) => {
      try {
        const url = new URL(u);
        return (
          url.origin === new URL(issuer).origin ||
          listed(u) ||
          (url.protocol === "https:" && isPublicRoutableHost(url.hostname))
        );
      } catch {
        return false;
      }
    };
    try {
      return await discoverOIDCConfig({ issuer, isTrustedOrigin: trusted, timeout: 10_000 });
    } catch (err) {
      if (err instanceof DiscoveryError)
        throw new SsoError(`The issuer's discovery document failed: ${err.message}`, "BAD_REQUEST");
      throw err;
    }
  }

  /** Copies the proven domains into the list the plugin finds an org by. Two verifications racing
   *  in one org can leave a domain out of the copy, which only keeps the email from finding the
   *  org (the org's slug still does) until the next verification or save copies it again. */
  async function syncProviderDomains(orgId: string): Promise<void> {
    const domains = await provenDomains(db, orgId);
    await db.ssoProvider.updateMany({ where: { organizationId: orgId }, data: { domain: domains.join(",") } });
  }

  /** Verify pressed on a domain already proven: the look the daily one would make, now. Found, it
   *  is no longer missing; answered without it, it is missing from now if it was not already. */
  async function lookedAgain(orgId: string, domain: string, check: RecordCheck) {
    const now = new Date();
    const mine = { domain, organizationId: orgId };
    if (check.found) {
      await db.ssoVerifiedDomain.updateMany({ where: mine, data: { checkedAt: now, missingSince: null } });
      return { verified: true };
    }
    if (check.answered) {
      await db.ssoVerifiedDomain.updateMany({ where: { ...mine, missingSince: null }, data: { missingSince: now } });
      await db.ssoVerifiedDomain.updateMany({ where: mine, data: { checkedAt: now } });
    }
    return {
      verified: true,
      message: `${check.message} The domain stays verified until a week after its record went missing; put it back before then.`,
    };
  }

  async function get(actor: Actor): Promise<SsoSettings> {
    const [row, org, claims, provenRows] = await Promise.all([
      db.ssoProvider.findUnique({ where: { organizationId: actor.orgId } }),
      db.org.findUnique({ where: { id: actor.orgId }, select: { slug: true } }),
      db.ssoDomainClaim.findMany({ where: { organizationId: actor.orgId }, orderBy: { createdAt: "asc" } }),
      db.ssoVerifiedDomain.findMany({ where: { organizationId: actor.orgId }, orderBy: { verifiedAt: "asc" } }),
    ]);
    const config = row?.oidcConfig ? (JSON.parse(row.oidcConfig) as { clientId?: string; clientSecret?: string }) : {};
    const verified = provenRows.map((d) => d.domain);
    const pending = claims.map((c) => c.domain).filter((d) => !verified.includes(d));
    const missing = new Map(provenRows.flatMap((d) => (d.missingSince ? [[d.domain, d.missingSince] as const] : [])));
    const status = (domain: string, isVerified: boolean): SsoDomainStatus => {
      const since = missing.get(domain);
      return {
        domain,
        verified: isVerified,
        record: domainRecord(deps.key, actor.orgId, domain),
        ...(since ? { recordMissing: { since, releaseAt: releaseAt(since) } } : {}),
      };
    };
    return {
      configured: row !== null,
      issuer: row?.issuer ?? "",
      clientId: config.clientId ?? "",
      domains: [...verified, ...pending],
      domainStatus: [...verified.map((d) => status(d, true)), ...pending.map((d) => status(d, false))],
      hasClientSecret: typeof config.clientSecret === "string" && config.clientSecret !== "",
      callbackPath: ssoCallbackPath(actor.orgId),
      orgSlug: org?.slug ?? "",
      accountsOn: (await deps.accountsOn?.()) ?? true,
      updatedAt: row?.updatedAt ?? null,
      changeable: actor.role === "owner",
    };
  }

  return {
    get,

    async save(actor, input) {
      ownersOnly(actor);
      if (deps.accountsOn && !(await deps.accountsOn()))
        throw new SsoError("Single sign-on needs accounts: create the first account (/signup) first.", "BAD_REQUEST");
      const domains = normalizeDomains(input.domains);
      if (!domains.ok) throw new SsoError(domains.message, "BAD_REQUEST");
      const clientId = input.clientId.trim();
      if (!clientId) throw new SsoError("Give the client id the identity provider issued for Quiver.", "BAD_REQUEST");
      const providerId = ssoProviderId(actor.orgId);
      const existing = await db.ssoProvider.findUnique({ where: { providerId } });
      const storedSecret = existing?.oidcConfig
        ? (JSON.parse(existing.oidcConfig) as { clientSecret?: string }).clientSecret
        : undefined;
      const newSecret = input.clientSecret?.trim();
      if (!newSecret && !storedSecret)
        throw new SsoError("Give the client secret the identity provider issued for Quiver.", "BAD_REQUEST");
      // A domain signs in through one org's IdP only ("Sign in with SSO" finds the org by it): the
      // one whose DNS record proved it. Listing it elsewhere is only a claim, and claims take
      // nothing from anyone; a domain proven by another org cannot be listed.
      const taken = await db.ssoVerifiedDomain.findFirst({
        where: { domain: { in: domains.domains }, NOT: { organizationId: actor.orgId } },
      });
      if (taken)
        throw new SsoError(
          `${taken.domain} is verified by another organization and signs in through its single sign-on.`,
          "CONFLICT",
        );
      const stillVerified = (await provenDomains(db, actor.orgId)).filter((d) => domains.domains.includes(d));
      const claimed = domains.domains.filter((d) => !stillVerified.includes(d));

      const issuer = await checkIssuer(input.issuer);
      const found = await discover(issuer);
      const oidcConfig = JSON.stringify({
        issuer: found.issuer,
        clientId,
        clientSecret: newSecret ? encryptSecret(secretKey, providerId, newSecret) : storedSecret,
        authorizationEndpoint: found.authorizationEndpoint,
        tokenEndpoint: found.tokenEndpoint,
        tokenEndpointAuthentication: found.tokenEndpointAuthentication,
        jwksEndpoint: found.jwksEndpoint,
        userInfoEndpoint: found.userInfoEndpoint,
        discoveryEndpoint: found.discoveryEndpoint,
        pkce: true,
        scopes: SCOPES,
        overrideUserInfo: false,
      });
      const data = { issuer, oidcConfig, domain: stillVerified.join(","), userId: actor.userId };
      const orgId = actor.orgId;
      // Another issuer's subject ids mean other people: accounts linked through the old one go.
      const forget =
        existing && existing.issuer !== issuer ? [db.authAccount.deleteMany({ where: { providerId } })] : [];
      await db.$transaction([
        ...forget,
        db.ssoProvider.upsert({
          where: { providerId },
          create: { ...data, providerId, organizationId: orgId },
          update: data,
        }),
        db.ssoVerifiedDomain.deleteMany({ where: { organizationId: orgId, domain: { notIn: stillVerified } } }),
        db.ssoDomainClaim.deleteMany({ where: { organizationId: orgId, domain: { notIn: claimed } } }),
        ...claimed.map((domain) =>
          db.ssoDomainClaim.upsert({
            where: { organizationId_domain: { organizationId: orgId, domain } },
            create: { organizationId: orgId, domain },
            update: {},
          }),
        ),
      ]);
      return get(actor);
    },

    async test(actor, issuerText) {
      const issuer =
        issuerText?.trim() ||
        (await db.ssoProvider.findUnique({ where: { organizationId: actor.orgId }, select: { issuer: true } }))?.issuer;
      if (!issuer) return { ok: false, message: "Give an issuer URL to test." };
      try {
        const found = await discover(await checkIssuer(issuer));
        return {
          ok: true,
          issuer: found.issuer,
          authorizationEndpoint: found.authorizationEndpoint,
          tokenEndpoint: found.tokenEndpoint,
          jwksEndpoint: found.jwksEndpoint,
          userInfoEndpoint: found.userInfoEndpoint,
        };
      } catch (err) {
        if (err instanceof SsoError) return { ok: false, message: err.message };
        throw err;
      }
    },

    async remove(actor) {
      ownersOnly(actor);
      const providerId = ssoProviderId(actor.orgId);
      const [, removed] = await db.$transaction([
        db.authAccount.deleteMany({ where: { providerId } }),
        db.ssoProvider.deleteMany({ where: { providerId } }),
        db.ssoVerifiedDomain.deleteMany({ where: { organizationId: actor.orgId } }),
        db.ssoDomainClaim.deleteMany({ where: { organizationId: actor.orgId } }),
      ]);
      return { removed: removed.count > 0 };
    },

    async verifyDomain(actor, text) {
      ownersOnly(actor);
      const domain = text.trim().toLowerCase();
      const orgId = actor.orgId;
      const claim = await db.ssoDomainClaim.findUnique({
        where: { organizationId_domain: { organizationId: orgId, domain } },
      });
      const held = await db.ssoVerifiedDomain.findUnique({ where: { domain } });
      if (!claim && held?.organizationId !== orgId)
        throw new SsoError(`${domain.slice(0, 80)} is not among the domains saved for single sign-on.`, "BAD_REQUEST");
      const check = await checkRecord(txtLookup, domainRecord(deps.key, orgId, domain));
      if (!claim) return { ...(await lookedAgain(orgId, domain, check)), settings: await get(actor) };
      if (!check.found) return { verified: false, message: check.message, settings: await get(actor) };
      const elsewhere = () => new SsoError(`${domain} is verified by another organization already.`, "CONFLICT");
      if (held && held.organizationId !== orgId) throw elsewhere();
      try {
        await db.$transaction([
          // The domain is the key: a second org verifying it at the same instant fails here.
          ...(held
            ? []
            : [db.ssoVerifiedDomain.create({ data: { domain, organizationId: orgId, userId: actor.userId } })]),
          db.ssoDomainClaim.deleteMany({ where: { organizationId: orgId, domain } }),
        ]);
      } catch (err) {
        if ((err as { code?: string }).code === "P2002") throw elsewhere();
        throw err;
      }
      await syncProviderDomains(orgId);
      return { verified: true, settings: await get(actor) };
    },
  };
}
