// Single sign-on over HTTP against a real OpenID Connect provider (server/testing/oidc-idp.ts),
// on both databases: the accounts endpoints as the server mounts them (accounts/index.ts) with
// the SSO plugin (accounts/sso.ts), an org's settings saved through services/sso.ts. Each case
// is a whole sign-in: POST /sign-in/sso, login and consent at the IdP, the callback, and what
// the database and the session say afterwards.
import { createServer, type Server } from "node:http";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../../testing/db";
import { startOidcIdp, type TestIdp } from "../../testing/oidc-idp";
import { startTestDns, type TestDns } from "../../testing/dns-server";
import { dnsTxtLookup } from "../../services/sso-domains";
import { createAccounts, type Accounts } from "./index";
import { ssoAccounts } from "./sso";
import { createSsoService, ssoProviderId, type SsoService } from "../../services/sso";
import type { Actor } from "../../services/types";

const SECRET = "client-secret-0123456789";
const idpUser = (login: string, email: string, emailVerified = true) => ({
  login,
  password: `pw-${login}`,
  email,
  emailVerified,
  name: login,
});

/** A browser's cookies for one origin (names are unique enough here). */
class Jar {
  private cookies = new Map<string, string>();
  header = () => [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  take(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(";");
      const eq = pair.indexOf("=");
      const expired = attrs.some((a) => /max-age=0\b/i.test(a.trim()));
      if (expired) this.cookies.delete(pair.slice(0, eq));
      else this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }
}

describe.each(testDatabases())("SSO sign-in on %s", (provider) => {
  const t = useTestDb(provider);
  let idp: TestIdp;
  let dns: TestDns;
  let accounts: Accounts;
  let server: Server;
  let base = "";
  let sso: SsoService;
  let owner: Actor;
  const key = randomBytes(32);

  beforeAll(async () => {
    const db = t.current.db;
    idp = await startOidcIdp({
      users: [
        idpUser("ada", "ada@acme.test"),
        idpUser("una", "una@acme.test", false),
        idpUser("eve", "eve@acme.test", false),
        idpUser("gus", "gus@other.test"),
        idpUser("max", "max@acme.test"),
        idpUser("bob", "bob@acme.test"),
        idpUser("vic", "vic@acme.test"),
        idpUser("lia", "lia@acme.test"),
        idpUser("bea", "bea@beta.test"),
        idpUser("ben", "ben@beta.test"),
      ],
    });
    dns = await startTestDns();
    const parts = await ssoAccounts({ db, key, privateIssuers: [idp.issuer] });
    accounts = await createAccounts({
      env: {
        dataDir: mkdtempSync(join(tmpdir(), "quiver-sso-")),
        HOST: "127.0.0.1",
        QUIVER_AUTH: "accounts",
        QUIVER_SIGNUP: "invite",
        QUIVER_SMTP_URL: undefined,
        QUIVER_MAIL_FROM: undefined,
      },
      db,
      provider,
      key,
      log: () => {},
      plugins: [parts.plugin],
      browserPrefixes: parts.browserPrefixes,
      signUpGates: [parts.signUpGate],
    });
    server = createServer((req, res) => void (accounts.handle(req, res) || res.writeHead(404).end()));
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", () => ok()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    // The first owner (from this machine), then people with passwords made as better-auth makes them.
    const first = await fetch(`${base}/api/auth/first-owner`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Olga", email: "olga@acme.test", password: "owner-password-1" }),
    });
    expect(first.status, await first.clone().text()).toBe(200);
    const olga = await db.user.findUniqueOrThrow({
      where: { email: "olga@acme.test" },
      include: { memberships: true },
    });
    owner = { userId: olga.id, orgId: olga.memberships[0].orgId, role: "owner" };
    const hash = await (await (await accounts.instance()).$context).password.hash("member-password-1");
    for (const [email, member] of [
      ["ada@acme.test", true],
      ["una@acme.test", true],
      ["bob@acme.test", false],
      ["vic@acme.test", true],
      ["lia@acme.test", true],
    ] as const) {
      const user = await db.user.create({ data: { email, name: email.split("@")[0] } });
      await db.authAccount.create({
        data: { userId: user.id, providerId: "credential", accountId: user.id, password: hash },
      });
      if (member) await db.membership.create({ data: { userId: user.id, orgId: owner.orgId, role: "member" } });
    }

    sso = createSsoService({ db, key, privateIssuers: [idp.issuer], txtLookup: dnsTxtLookup([dns.server]) });
    const saved = await sso.save(owner, {
      issuer: idp.issuer,
      clientId: "quiver-test",
      clientSecret: SECRET,
      domains: "acme.test",
    });
    // The org's DNS proves acme.test its own (services/sso-domains.ts).
    await publishAndVerify("acme.test");
    idp.registerClient({ clientId: "quiver-test", clientSecret: SECRET, redirectUris: [base + saved.callbackPath] });
  }, 60_000);

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((ok) => server?.close(ok));
    accounts?.dispose();
    await idp?.close();
    await dns?.close();
  });

  /** Puts the org's TXT record for `domain` in DNS and verifies it. */
  async function publishAndVerify(domain: string) {
    const { record } = (await sso.get(owner)).domainStatus.find((d) => d.domain === domain)!;
    dns.records.set(record.name, [record.value]);
    expect(await sso.verifyDomain(owner, domain)).toMatchObject({ verified: true });
  }

  /** A whole sign-in: where Quiver sends the browser at the end, and the browser's cookies. */
  async function signIn(body: Record<string, string>, who: { login: string; consent?: boolean }) {
    const jar = new Jar();
    const start = await fetch(`${base}/api/auth/sign-in/sso`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: base },
      body: JSON.stringify({ callbackURL: "/", errorCallbackURL: "/signin?sso=failed", ...body }),
    });
    jar.take(start);
    const { url } = (await start.json()) as { url: string };
    const back = await idp.authorize(url, { login: who.login, password: `pw-${who.login}`, consent: who.consent });
    expect(back.startsWith(`${base}/api/auth/sso/callback/`)).toBe(true);
    const done = await fetch(back, { redirect: "manual", headers: { cookie: jar.header() } });
    jar.take(done);
    const location = new URL(done.headers.get("location") ?? "", base);
    const session = await fetch(`${base}/api/auth/get-session`, { headers: { cookie: jar.header() } }).then(
      (r) => r.json() as Promise<{ user: { email: string }; session: { activeOrganizationId: string | null } } | null>,
    );
    return { status: done.status, location, error: location.searchParams.get("error"), session };
  }

  const ssoAccountOf = (email: string) =>
    t.current.db.authAccount.findFirst({ where: { providerId: ssoProviderId(owner.orgId), user: { email } } });

  it("redirects to the IdP's authorization endpoint with state and PKCE, found by email domain or by org slug", async () => {
    for (const body of [{ email: "ada@acme.test" }, { organizationSlug: (await sso.get(owner)).orgSlug }]) {
      const res = await fetch(`${base}/api/auth/sign-in/sso`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ callbackURL: "/", ...body }),
      });
      const url = new URL(((await res.json()) as { url: string }).url);
      expect(url.origin + url.pathname).toBe(`${idp.issuer}/auth`);
      expect(url.searchParams.get("client_id")).toBe("quiver-test");
      expect(url.searchParams.get("redirect_uri")).toBe(base + (await sso.get(owner)).callbackPath);
      expect(url.searchParams.get("state")).toBeTruthy();
      expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    }
    const unknown = await fetch(`${base}/api/auth/sign-in/sso`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ callbackURL: "/", email: "x@nowhere.test" }),
    });
    expect(unknown.status).toBe(404);
  });

  it("links an existing member's account by the IdP's verified email and signs them into the org", async () => {
    const r = await signIn({ email: "ada@acme.test" }, { login: "ada" });
    expect(r.error).toBeNull();
    expect(r.location.pathname).toBe("/");
    expect(r.session?.user.email).toBe("ada@acme.test");
    expect(r.session?.session.activeOrganizationId).toBe(owner.orgId);
    expect(await ssoAccountOf("ada@acme.test")).toMatchObject({ accountId: "ada" });
    const ada = await t.current.db.user.findUniqueOrThrow({ where: { email: "ada@acme.test" } });
    expect(
      await t.current.db.auditEvent.count({ where: { actorId: ada.id, action: "auth.signed_in", orgId: owner.orgId } }),
    ).toBe(1);
    // The second time the link itself signs in.
    expect((await signIn({ email: "ada@acme.test" }, { login: "ada" })).session?.user.email).toBe("ada@acme.test");
  });

  it("creates a new person of an allowed domain, who joins the org as member", async () => {
    const r = await signIn({ organizationSlug: (await sso.get(owner)).orgSlug }, { login: "max" });
    expect(r.error).toBeNull();
    expect(r.session?.user.email).toBe("max@acme.test");
    const max = await t.current.db.user.findUniqueOrThrow({
      where: { email: "max@acme.test" },
      include: { memberships: true },
    });
    expect(max.emailVerified).toBe(true);
    expect(max.memberships.find((m) => m.orgId === owner.orgId)?.role).toBe("member");
    expect(r.session?.session.activeOrganizationId).toBe(owner.orgId);
  });

  it("refuses an unverified email, a domain not allowed and a stranger's account, with codes the page explains", async () => {
    const cases = [
      { login: "eve", error: "sso_email_unverified", email: "eve@acme.test" },
      { login: "una", error: "account not linked", email: "una@acme.test" },
      { login: "gus", error: "sso_domain_not_allowed", email: "gus@other.test" },
      { login: "bob", error: "sso_account_not_in_org", email: "bob@acme.test" },
    ];
    for (const c of cases) {
      const r = await signIn({ organizationSlug: (await sso.get(owner)).orgSlug }, { login: c.login });
      expect(r.error, c.login).toBe(c.error);
      expect(r.location.pathname).toBe("/signin");
      expect(r.session).toBeNull();
      expect(await ssoAccountOf(c.email)).toBeNull();
    }
    expect(await t.current.db.user.findUnique({ where: { email: "eve@acme.test" } })).toBeNull();
    expect(await t.current.db.user.findUnique({ where: { email: "gus@other.test" } })).toBeNull();
    const denied = await signIn({ email: "ada@acme.test" }, { login: "ada", consent: false });
    expect(denied.error).toBe("access_denied");
    // Each refusal is an audit event of the org, naming the email where Quiver's rules refused it.
    const failed = await t.current.db.auditEvent.findMany({
      where: { orgId: owner.orgId, action: "auth.sign_in_failed" },
      orderBy: { createdAt: "asc" },
    });
    expect(failed.map((e) => (e.detail as { reason: string }).reason)).toEqual([
      "sso_email_unverified",
      "account not linked",
      "sso_domain_not_allowed",
      "sso_account_not_in_org",
      "access_denied",
    ]);
    expect(failed.map((e) => (e.detail as { email?: string }).email)).toEqual([
      "eve@acme.test",
      undefined,
      "gus@other.test",
      "bob@acme.test",
      undefined,
    ]);
  });

  it("never signs in through the org's IdP a person who has another way in and belongs to another org", async () => {
    const db = t.current.db;
    // The org's domains are not proven its own: its IdP could claim any member's address. Vic
    // owns another org too, and has a password: linking him would hand that org to the IdP.
    const elsewhere = await db.org.create({ data: { slug: `elsewhere-${provider}`, name: "Elsewhere" } });
    const vic = await db.user.findUniqueOrThrow({ where: { email: "vic@acme.test" } });
    await db.membership.create({ data: { userId: vic.id, orgId: elsewhere.id, role: "owner" } });
    const slug = (await sso.get(owner)).orgSlug;
    const refused = await signIn({ organizationSlug: slug }, { login: "vic" });
    expect(refused.error).toBe("sso_account_in_other_orgs");
    expect(refused.session).toBeNull();
    expect(await ssoAccountOf("vic@acme.test")).toBeNull();

    // Lia is linked while she is this org's alone; once she joins another org, the link no
    // longer signs her in (her password does), and again once she leaves it.
    expect((await signIn({ organizationSlug: slug }, { login: "lia" })).session?.user.email).toBe("lia@acme.test");
    const lia = await db.user.findUniqueOrThrow({ where: { email: "lia@acme.test" } });
    const joined = await db.membership.create({ data: { userId: lia.id, orgId: elsewhere.id, role: "member" } });
    const later = await signIn({ organizationSlug: slug }, { login: "lia" });
    expect(later.error).toBe("sso_account_in_other_orgs");
    expect(later.session).toBeNull();
    await db.membership.delete({ where: { id: joined.id } });
    expect((await signIn({ organizationSlug: slug }, { login: "lia" })).session?.user.email).toBe("lia@acme.test");

    // A person the IdP made has no other way in: the IdP is theirs, in any org they join.
    const max = await db.user.findUniqueOrThrow({ where: { email: "max@acme.test" } });
    await db.membership.create({ data: { userId: max.id, orgId: elsewhere.id, role: "member" } });
    expect((await signIn({ organizationSlug: slug }, { login: "max" })).session?.user.email).toBe("max@acme.test");
  });

  it("lets only the org's owners change its single sign-on", async () => {
    const admin = { ...owner, role: "admin" as const };
    const input = { issuer: idp.issuer, clientId: "quiver-test", domains: "acme.test, victim.test" };
    await expect(sso.save(admin, input)).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(sso.remove(admin)).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect((await sso.get(admin)).changeable).toBe(false);
    expect((await sso.get(owner)).domains).toEqual(["acme.test"]);
    expect((await sso.get(owner)).changeable).toBe(true);
  });

  it("links on a pending invitation only an account made through its link, not one anyone made for the address", async () => {
    // Mallory signed up first for the invited address (open sign-up, or before this fix the
    // address alone), with a password of hers: the row exists, its address never proven.
    const hash = await (await (await accounts.instance()).$context).password.hash("mallory-password-1");
    for (const [login, verified] of [
      ["ivy", false],
      ["ian", true],
    ] as const) {
      const email = `${login}@acme.test`;
      const user = await t.current.db.user.create({ data: { email, name: login, emailVerified: verified } });
      await t.current.db.authAccount.create({
        data: { userId: user.id, providerId: "credential", accountId: user.id, password: hash },
      });
      await t.current.db.invitation.create({
        data: {
          id: `inv-${login}`,
          orgId: owner.orgId,
          email,
          role: "member",
          status: "pending",
          expiresAt: new Date(Date.now() + 3_600_000),
          inviterId: owner.userId,
        },
      });
      idp.addUser(idpUser(login, email));
    }
    const slug = (await sso.get(owner)).orgSlug;
    const refused = await signIn({ organizationSlug: slug }, { login: "ivy" });
    expect(refused.error).toBe("sso_account_unverified");
    expect(refused.session).toBeNull();
    expect(await ssoAccountOf("ivy@acme.test")).toBeNull();
    const linked = await signIn({ organizationSlug: slug }, { login: "ian" });
    expect(linked.error).toBeNull();
    expect(linked.session?.user.email).toBe("ian@acme.test");
    expect(await ssoAccountOf("ian@acme.test")).toMatchObject({ accountId: "ian" });
  });

  it("keeps the client secret encrypted and never answers it", async () => {
    const settings = await sso.get(owner);
    expect(JSON.stringify(settings)).not.toContain(SECRET);
    expect(settings).toMatchObject({
      configured: true,
      issuer: idp.issuer,
      clientId: "quiver-test",
      domains: ["acme.test"],
      hasClientSecret: true,
    });
    const row = await t.current.db.ssoProvider.findUniqueOrThrow({ where: { organizationId: owner.orgId } });
    expect(row.oidcConfig).not.toContain(SECRET);
    // Saving without a secret keeps the stored one (sign-in still works).
    await sso.save(owner, { issuer: idp.issuer, clientId: "quiver-test", domains: "acme.test, example.org" });
    expect((await signIn({ email: "ada@acme.test" }, { login: "ada" })).session?.user.email).toBe("ada@acme.test");
    // The plugin's own provider routes do not exist over HTTP.
    for (const path of ["/sso/providers", "/sso/get-provider?providerId=x", "/sso/register"]) {
      const res = await fetch(`${base}/api/auth${path}`, {
        method: path === "/sso/register" ? "POST" : "GET",
        headers: { cookie: "" },
      });
      expect(res.status, path).toBe(404);
    }
  });

  it("tests the connection: discovery fetched and checked; private or broken issuers refused with a reason", async () => {
    expect(await sso.test(owner)).toMatchObject({ ok: true, issuer: idp.issuer, jwksEndpoint: `${idp.issuer}/jwks` });
    expect(await sso.test(owner, "http://127.0.0.1:9")).toMatchObject({
      ok: false,
      message: expect.stringMatching(/https|private/),
    });
    expect(await sso.test(owner, `${idp.issuer}/nope`)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/discovery/i),
    });
    await expect(sso.save(owner, { issuer: "https://10.0.0.1", clientId: "c", domains: "acme.test" })).rejects.toThrow(
      /private network/,
    );
    // Without accounts nothing is saved (an SSO sign-in must never make the server's first account).
    const off = createSsoService({
      db: t.current.db,
      key,
      privateIssuers: [idp.issuer],
      accountsOn: async () => false,
    });
    expect((await off.get(owner)).accountsOn).toBe(false);
    await expect(
      off.save(owner, { issuer: idp.issuer, clientId: "x", clientSecret: "y", domains: "acme.test" }),
    ).rejects.toThrow(/needs accounts/);
  });

  it("signs nobody in by a saved domain until DNS proves it the org's", async () => {
    await sso.save(owner, { issuer: idp.issuer, clientId: "quiver-test", domains: "acme.test, beta.test" });
    // Listed, not proven: the email's domain finds no org, and through the org's slug it is refused.
    const byEmail = await fetch(`${base}/api/auth/sign-in/sso`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ callbackURL: "/", email: "bea@beta.test" }),
    });
    expect(byEmail.status).toBe(404);
    const slug = (await sso.get(owner)).orgSlug;
    expect((await signIn({ organizationSlug: slug }, { login: "bea" })).error).toBe("sso_domain_not_allowed");
    expect(await t.current.db.user.findUnique({ where: { email: "bea@beta.test" } })).toBeNull();

    await publishAndVerify("beta.test");
    const r = await signIn({ email: "bea@beta.test" }, { login: "bea" });
    expect(r.error).toBeNull();
    expect(r.session?.user.email).toBe("bea@beta.test");
    // Taken off the list, it admits no one new again, nor the person it linked before; the
    // settings go back to acme.test alone, whose people still sign in.
    await sso.save(owner, { issuer: idp.issuer, clientId: "quiver-test", domains: "acme.test" });
    expect((await signIn({ organizationSlug: slug }, { login: "ben" })).error).toBe("sso_domain_not_allowed");
    const again = await signIn({ organizationSlug: slug }, { login: "bea" });
    expect(again.error).toBe("sso_domain_not_allowed");
    expect(again.session).toBeNull();
    expect((await signIn({ email: "ada@acme.test" }, { login: "ada" })).session?.user.email).toBe("ada@acme.test");
    expect(await t.current.db.ssoVerifiedDomain.count({ where: { organizationId: owner.orgId } })).toBe(1);
  });
});
