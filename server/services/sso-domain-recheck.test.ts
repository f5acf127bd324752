// A proven SSO domain's record looked at again daily, on both databases, against a real DNS server
// on a local port: gone for a week of looks, the domain is given up (a claim again, off the
// provider's list, an audit event); back in time, or DNS silent, it stays; several instances look
// once; a Verify that finds the record while a release is under way keeps the domain.
import { randomBytes } from "node:crypto";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { testDatabases } from "../testing/db";
import type { TestDns } from "../testing/dns-server";
import { useSsoDns } from "../testing/sso-dns";
import type { SsoService } from "./sso";
import { dnsTxtLookup, domainRecord, type TxtLookup } from "./sso-domains";
import {
  RECHECK_EVERY_MS,
  RELEASE_AFTER_MS,
  recheckProvenDomains,
  type RecheckDeps,
  type RecheckRound,
} from "./sso-domain-recheck";
import type { Actor } from "./types";

const DAY = 24 * 3_600_000;

describe.each(testDatabases())("proven SSO domains looked at again on %s", (provider) => {
  const f = useSsoDns(provider);
  const { t, key } = f;
  let dns: TestDns;
  let sso: SsoService;
  let owner: Actor;
  let deps: RecheckDeps;
  let start: number;

  const record = (domain: string) => domainRecord(key, owner.orgId, domain);
  const publish = (domain: string) => dns.records.set(record(domain).name, [record(domain).value]);
  const unpublish = (domain: string) => dns.records.delete(record(domain).name);
  const at = (ms: number) => new Date(start + ms);
  const row = (domain: string) => t.current.db.ssoVerifiedDomain.findUnique({ where: { domain } });
  const providerDomains = async () =>
    (await t.current.db.ssoProvider.findUniqueOrThrow({ where: { organizationId: owner.orgId } })).domain;
  const withLookup = (txtLookup: TxtLookup): RecheckDeps => ({ ...deps, txtLookup });

  beforeAll(() => {
    ({ dns, sso } = f);
    deps = { db: f.thread.db, direct: t.current.db, key, txtLookup: f.txtLookup };
  });
  beforeEach(async () => {
    const slug = `org-${randomBytes(4).toString("hex")}`;
    owner = {
      userId: "u-owner",
      orgId: (await t.current.db.org.create({ data: { slug, name: slug } })).id,
      role: "owner",
    };
    const domains = ["keep", "lapse"].map((d) => `${d}-${slug}.test`);
    await sso.save(owner, { issuer: f.idp.issuer, clientId: "c", clientSecret: "s", domains: domains.join(",") });
    for (const d of domains) {
      publish(d);
      expect(await sso.verifyDomain(owner, d)).toMatchObject({ verified: true });
    }
    start = Date.now();
  });
  /** This test's two domains, and a round's findings about them alone (earlier tests' orgs may be due too). */
  const named = async () => {
    const slug = (await t.current.db.org.findUniqueOrThrow({ where: { id: owner.orgId } })).slug;
    const keep = `keep-${slug}.test`;
    const lapse = `lapse-${slug}.test`;
    const ours = async (round: Promise<RecheckRound>) => {
      const r = await round;
      const only = (list: string[]) => list.filter((d) => d === keep || d === lapse);
      return {
        found: only(r.found),
        missing: only(r.missing),
        unanswered: only(r.unanswered),
        released: only(r.released),
      };
    };
    return { keep, lapse, ours };
  };

  it("gives a domain up after a week of looks without its record, and not before", async () => {
    const { keep, lapse, ours } = await named();
    unpublish(lapse);
    // Not due before a day has passed since it was verified.
    expect(await ours(recheckProvenDomains(deps, at(DAY / 2)))).toMatchObject({ found: [], missing: [] });
    expect(await ours(recheckProvenDomains(deps, at(DAY + 60_000)))).toEqual({
      found: [keep],
      missing: [lapse],
      unanswered: [],
      released: [],
    });
    const since = (await row(lapse))!.missingSince!;
    expect(since.getTime()).toBe(at(DAY + 60_000).getTime());
    // The settings say so, and when it will be given up; it still signs people in meanwhile.
    const status = (await sso.get(owner)).domainStatus.find((d) => d.domain === lapse);
    expect(status).toMatchObject({
      verified: true,
      recordMissing: { since, releaseAt: new Date(+since + RELEASE_AFTER_MS) },
    });
    expect((await providerDomains()).split(",")).toContain(lapse);
    // A look within the week keeps the first miss's time.
    expect(await ours(recheckProvenDomains(deps, at(3 * DAY)))).toMatchObject({ missing: [lapse], released: [] });
    expect((await row(lapse))!.missingSince).toEqual(since);

    const released = await ours(recheckProvenDomains(deps, at(DAY + 60_000 + RELEASE_AFTER_MS + DAY)));
    expect(released).toEqual({ found: [keep], missing: [], unanswered: [], released: [lapse] });
    expect(await row(lapse)).toBeNull();
    expect(await providerDomains()).toBe(keep);
    const settings = await sso.get(owner);
    expect(settings.domainStatus.map((d) => [d.domain, d.verified])).toEqual([
      [keep, true],
      [lapse, false],
    ]);
    const audit = await t.current.db.auditEvent.findMany({
      where: { orgId: owner.orgId, action: "sso.domain_released" },
    });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ target: lapse, actorId: null });
    expect(JSON.stringify(audit[0].detail)).toContain("No TXT record");
    // Its record back, Verify proves it again.
    publish(lapse);
    expect(await sso.verifyDomain(owner, lapse)).toMatchObject({ verified: true });
    expect((await providerDomains()).split(",").sort()).toEqual([keep, lapse].sort());
  }, 30_000);

  it("keeps a domain whose record comes back, and one whose DNS does not answer", async () => {
    const { lapse } = await named();
    unpublish(lapse);
    await recheckProvenDomains(deps, at(DAY + 1));
    expect((await row(lapse))!.missingSince).not.toBeNull();
    publish(lapse);
    expect((await recheckProvenDomains(deps, at(2 * DAY + 2))).found).toContain(lapse);
    expect((await row(lapse))!.missingSince).toBeNull();

    // A DNS that never answers, for three weeks of hourly rounds' worth: nothing is given up, and
    // each silent domain is asked again within the hour, not the next day.
    unpublish(lapse);
    const silent = withLookup(dnsTxtLookup(["127.0.0.1:9"]));
    const round = await recheckProvenDomains(silent, at(3 * DAY + 3));
    expect(round.unanswered).toContain(lapse);
    expect((await row(lapse))!.missingSince).toBeNull();
    expect((await recheckProvenDomains(silent, at(3 * DAY + 3 + 3_600_000))).unanswered).toContain(lapse);
    expect((await recheckProvenDomains(silent, at(24 * DAY))).released).toEqual([]);
    expect(await row(lapse)).not.toBeNull();
  }, 60_000);

  it("is one look per domain across instances, and a Verify that finds the record wins over a release", async () => {
    const { keep, lapse, ours } = await named();
    // Two instances' rounds at the same moment look at each domain once between them.
    const rounds = await Promise.all([
      ours(recheckProvenDomains(deps, at(DAY + 5))),
      ours(recheckProvenDomains(deps, at(DAY + 5))),
    ]);
    expect(rounds.flatMap((r) => r.found).sort()).toEqual([keep, lapse].sort());

    // Missing for long enough; the release's look is held until Verify (the record back) has run.
    unpublish(lapse);
    await t.current.db.ssoVerifiedDomain.update({
      where: { domain: lapse },
      data: { missingSince: at(-RELEASE_AFTER_MS), checkedAt: at(-RECHECK_EVERY_MS) },
    });
    let lookStarted!: () => void;
    const looking = new Promise<void>((r) => (lookStarted = r));
    let letGo!: () => void;
    const held = new Promise<void>((r) => (letGo = r));
    const slow: TxtLookup = async (name) => {
      lookStarted();
      await held;
      const err = Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: "ENOTFOUND" });
      throw err;
    };
    const releasing = ours(recheckProvenDomains(withLookup(slow), at(DAY + 10)));
    await looking;
    publish(lapse);
    expect(await sso.verifyDomain(owner, lapse)).toMatchObject({ verified: true });
    letGo();
    expect((await releasing).released).toEqual([]);
    expect(await row(lapse)).toMatchObject({ missingSince: null });
    expect((await providerDomains()).split(",")).toContain(lapse);
  }, 30_000);

  it("Verify on a proven domain whose record is gone says so, and when it will be given up", async () => {
    const { lapse } = await named();
    unpublish(lapse);
    const result = await sso.verifyDomain(owner, lapse);
    expect(result).toMatchObject({ verified: true, message: expect.stringMatching(/No TXT record.*a week/) });
    const status = result.settings.domainStatus.find((d) => d.domain === lapse);
    expect(status?.recordMissing?.since).toBeInstanceOf(Date);
  });
});
