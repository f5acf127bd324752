// Proving SSO email domains by DNS, on both databases, with a real DNS server on a local port
// (server/testing/dns-server.ts) and a real OpenID Connect provider for the settings' issuer:
// a squatter's claim takes nothing from the domain's owner, one org's record proves nothing for
// another, two orgs verifying the same domain at once leave exactly one holding it, and every
// failed lookup says what to do. The service runs on the query thread's client, as in the
// server (batched transactions only). Sign-in by a verified domain is in auth/accounts/sso.test.ts.
import { beforeAll, describe, expect, it } from "vitest";
import type { QueryThread } from "../db/query-thread";
import { testDatabases } from "../testing/db";
import type { TestDns } from "../testing/dns-server";
import type { TestIdp } from "../testing/oidc-idp";
import { useSsoDns } from "../testing/sso-dns";
import { createSsoService, type SsoService } from "./sso";
import { dnsTxtLookup, domainRecord } from "./sso-domains";
import type { Actor } from "./types";

describe.each(testDatabases())("SSO domains proven by DNS on %s", (provider) => {
  const f = useSsoDns(provider);
  const { t, key } = f;
  let idp: TestIdp;
  let dns: TestDns;
  let thread: QueryThread;
  let sso: SsoService;
  let owner: Actor;
  let squatter: Actor;

  const settings = (domains: string) => ({ issuer: idp.issuer, clientId: "c", clientSecret: "s", domains });
  const publish = (actor: Actor, domain: string) => {
    const record = domainRecord(key, actor.orgId, domain);
    dns.records.set(record.name, [...(dns.records.get(record.name) ?? []), record.value]);
  };
  const proven = async () =>
    (await t.current.db.ssoVerifiedDomain.findMany({ orderBy: { domain: "asc" } })).map((d) => [
      d.domain,
      d.organizationId,
    ]);

  beforeAll(async () => {
    ({ idp, dns, thread, sso } = f);
    const org = (slug: string) => t.current.db.org.create({ data: { slug, name: slug } });
    owner = { userId: "u-owner", orgId: (await org("bigcorp")).id, role: "owner" };
    squatter = { userId: "u-squatter", orgId: (await org("squat")).id, role: "owner" };
  });

  it("lets a squatter's claim take nothing from the domain's owner", async () => {
    // The squatter lists bigcorp.test first: a claim, which finds no org and admits nobody.
    const squatted = await sso.save(squatter, settings("bigcorp.test"));
    expect(squatted.domainStatus).toEqual([
      { domain: "bigcorp.test", verified: false, record: domainRecord(key, squatter.orgId, "bigcorp.test") },
    ]);
    expect(await t.current.db.ssoProvider.findUnique({ where: { organizationId: squatter.orgId } })).toMatchObject({
      domain: "",
    });
    // The owner can still list it, and its DNS record (which only it was shown) proves it.
    await sso.save(owner, settings("bigcorp.test"));
    publish(owner, "bigcorp.test");
    expect(await sso.verifyDomain(owner, "bigcorp.test")).toMatchObject({
      verified: true,
      settings: { domains: ["bigcorp.test"], domainStatus: [{ domain: "bigcorp.test", verified: true }] },
    });
    expect(await t.current.db.ssoProvider.findUnique({ where: { organizationId: owner.orgId } })).toMatchObject({
      domain: "bigcorp.test",
    });
    // The owner's record proves nothing for the squatter, whose token differs.
    expect(await sso.verifyDomain(squatter, "bigcorp.test")).toMatchObject({
      verified: false,
      message: expect.stringContaining("do not include"),
    });
    // Nor can it save the domain any more, nor a spelling of it.
    for (const spelling of ["bigcorp.test", "BigCorp.TEST", "@bigcorp.test"])
      await expect(sso.save(squatter, settings(spelling))).rejects.toMatchObject({
        code: "CONFLICT",
        message: expect.stringContaining("verified by another organization"),
      });
    expect(await proven()).toEqual([["bigcorp.test", owner.orgId]]);
  });

  it("leaves exactly one org holding a domain two verify at the same instant", async () => {
    // Both records in DNS (a domain that changed hands): the key decides, not the timing.
    await sso.save(owner, settings("bigcorp.test, twice.test"));
    await sso.save(squatter, settings("twice.test"));
    publish(owner, "twice.test");
    publish(squatter, "twice.test");
    const results = await Promise.allSettled([
      sso.verifyDomain(owner, "twice.test"),
      sso.verifyDomain(squatter, "twice.test"),
    ]);
    const won = results.filter((r) => r.status === "fulfilled" && r.value.verified);
    const lost = results.filter((r) => r.status === "rejected");
    expect([won.length, lost.length]).toEqual([1, 1]);
    expect((lost[0] as PromiseRejectedResult).reason).toMatchObject({ code: "CONFLICT" });
    const holders = (await proven()).filter(([d]) => d === "twice.test");
    expect(holders).toHaveLength(1);
    // The provider rows agree with the table.
    const rows = await t.current.db.ssoProvider.findMany({ where: { domain: { contains: "twice.test" } } });
    expect(rows.map((r) => r.organizationId)).toEqual([holders[0][1]]);
  });

  it("says what to do when the record is missing or DNS does not answer, and refuses a domain never saved", async () => {
    await sso.save(owner, settings("bigcorp.test, later.test"));
    expect(await sso.verifyDomain(owner, "later.test")).toMatchObject({
      verified: false,
      message: expect.stringContaining("No TXT record at _quiver-verification.later.test yet"),
    });
    await expect(sso.verifyDomain(owner, "never-saved.test")).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(sso.verifyDomain({ ...owner, role: "admin" }, "later.test")).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    // A DNS server that does not answer: the lookup gives up and says so.
    const silent = createSsoService({
      db: thread.db,
      key,
      privateIssuers: [idp.issuer],
      txtLookup: dnsTxtLookup(["127.0.0.1:9"]),
    });
    expect(await silent.verifyDomain(owner, "later.test")).toMatchObject({
      verified: false,
      message: expect.stringContaining("DNS did not answer"),
    });
    // Verifying a proven domain again changes nothing.
    expect(await sso.verifyDomain(owner, "bigcorp.test")).toMatchObject({ verified: true });
  }, 30_000);

  it("forgets an org's claims and proofs when its single sign-on is removed", async () => {
    await sso.remove(owner);
    expect(await t.current.db.ssoVerifiedDomain.count({ where: { organizationId: owner.orgId } })).toBe(0);
    expect(await t.current.db.ssoDomainClaim.count({ where: { organizationId: owner.orgId } })).toBe(0);
    // The domain is free to list again, but the squatter still cannot prove it without the owner's DNS.
    await sso.save(squatter, settings("bigcorp.test"));
    expect(await sso.verifyDomain(squatter, "bigcorp.test")).toMatchObject({ verified: false });
  });
});
