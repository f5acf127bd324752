// Keeping an org's proven single sign-on domains its own. A domain changes hands (sold, lapsed,
// a subsidiary spun off), and an org that proved it once would otherwise send its people to its
// provider for good. So each proven domain's TXT record (sso-domains.ts) is looked up again once
// a day. A record gone, DNS answering without it, for a week of looks in a row gives the domain
// up: it is back to a claim its owners see as unverified, no one of it signs in through the
// org's provider any more (auth/accounts/sso.ts asks SsoVerifiedDomain at every sign-in), and
// the org's audit log says so (`sso.domain_released`). A DNS that does not answer changes
// nothing and is asked again within the hour, so an outage never takes a domain away.
//
// Every server instance runs it. One look is one instance's: it is taken by moving the row's
// checkedAt forward from the value read, which only one update can do; the release is one
// interactive transaction that gives the domain up only if no Verify proved it again meanwhile.
import type { Db, DirectDb } from "../db";
import { checkRecord, domainRecord, provenDomains, type TxtLookup } from "./sso-domains";

const HOUR_MS = 3_600_000;
export const RECHECK_EVERY_MS = 24 * HOUR_MS;
/** How long a record may stay gone before the domain is given up. */
export const RELEASE_AFTER_MS = 7 * 24 * HOUR_MS;
/** Rows looked at per round; a round comes every hour. */
const ROUND_SIZE = 200;

export interface RecheckDeps {
  db: Db;
  /** For the release, which reads and writes in one interactive transaction. */
  direct: DirectDb;
  key: Buffer;
  txtLookup: TxtLookup;
}

export interface RecheckRound {
  found: string[];
  /** Answered without the record, not yet given up. */
  missing: string[];
  /** DNS did not answer: looked at again within the hour. */
  unanswered: string[];
  released: string[];
}

/** When a domain whose record went missing at `since` is given up. */
export const releaseAt = (since: Date): Date => new Date(since.getTime() + RELEASE_AFTER_MS);

/** One round: every proven domain not looked at for a day, looked at now. */
export async function recheckProvenDomains(deps: RecheckDeps, now = new Date()): Promise<RecheckRound> {
  const { db } = deps;
  const round: RecheckRound = { found: [], missing: [], unanswered: [], released: [] };
  const due = await db.ssoVerifiedDomain.findMany({
    where: { checkedAt: { lte: new Date(now.getTime() - RECHECK_EVERY_MS) } },
    orderBy: { checkedAt: "asc" },
    take: ROUND_SIZE,
  });
  for (const row of due) {
    const mine = { domain: row.domain, organizationId: row.organizationId };
    const taken = await db.ssoVerifiedDomain.updateMany({
      where: { ...mine, checkedAt: row.checkedAt },
      data: { checkedAt: now },
    });
    if (taken.count === 0) continue; // another instance's look, or a Verify just now
    const check = await checkRecord(deps.txtLookup, domainRecord(deps.key, row.organizationId, row.domain));
    if (check.found) {
      await db.ssoVerifiedDomain.updateMany({ where: { ...mine, checkedAt: now }, data: { missingSince: null } });
      round.found.push(row.domain);
    } else if (!check.answered) {
      const again = new Date(now.getTime() - RECHECK_EVERY_MS + HOUR_MS);
      await db.ssoVerifiedDomain.updateMany({ where: { ...mine, checkedAt: now }, data: { checkedAt: again } });
      round.unanswered.push(row.domain);
    } else if (row.missingSince && now >= releaseAt(row.missingSince)) {
      if (await release(deps.direct, row.organizationId, row.domain, now, check.message))
        round.released.push(row.domain);
    } else {
      if (!row.missingSince)
        await db.ssoVerifiedDomain.updateMany({ where: { ...mine, checkedAt: now }, data: { missingSince: now } });
      round.missing.push(row.domain);
    }
  }
  return round;
}

/** Gives `domain` up unless it was looked at again since `lookedAt` (a Verify that found it). */
async function release(db: DirectDb, orgId: string, domain: string, lookedAt: Date, reason: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const gone = await tx.ssoVerifiedDomain.deleteMany({
      where: { domain, organizationId: orgId, checkedAt: lookedAt, missingSince: { not: null } },
    });
    if (gone.count === 0) return false;
    await tx.ssoDomainClaim.upsert({
      where: { organizationId_domain: { organizationId: orgId, domain } },
      create: { organizationId: orgId, domain },
      update: {},
    });
    const left = await provenDomains(tx, orgId);
    await tx.ssoProvider.updateMany({ where: { organizationId: orgId }, data: { domain: left.join(",") } });
    await tx.auditEvent.create({
      data: {
        orgId,
        actorId: null,
        action: "sso.domain_released",
        target: domain,
        detail: { reason: `its DNS record was missing for ${RELEASE_AFTER_MS / (24 * HOUR_MS)} days: ${reason}` },
      },
    });
    return true;
  });
}

/** Runs a round now and every hour until stopped; the caller (server/app.ts) owns it. */
export function startDomainRecheck(
  deps: RecheckDeps,
  opts: { log: (line: string) => void; intervalMs?: number },
): { stop(): void; ready: Promise<void> } {
  const run = async () => {
    try {
      const round = await recheckProvenDomains(deps);
      for (const domain of round.released) opts.log(`sso domain ${domain} given up: its DNS record is gone`);
      for (const domain of round.unanswered)
        opts.log(`sso domain ${domain}: DNS did not answer; asking again within the hour`);
    } catch (err) {
      opts.log(`sso domain re-check failed: ${(err as Error).message}`);
    }
  };
  const ready = run();
  const timer = setInterval(() => void run(), opts.intervalMs ?? HOUR_MS);
  timer.unref();
  return { stop: () => clearInterval(timer), ready };
}
