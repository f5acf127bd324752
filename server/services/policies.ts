// Org policies: versioned rule lists in OrgPolicy (the highest version is in force). Setting
// rules writes a new version and an audit event; loading fails closed: a policy that cannot be
// read or does not validate is reported as not loaded, and the pipeline then denies every call
// that is not read-only.
import type { Db } from "../db";
import type { Actor } from "./types";
import { PolicyRules, type PolicyRule } from "../policy/rules";
import type { LoadedPolicy } from "../policy/decide";

export class PolicyError extends Error {
  constructor(
    message: string,
    readonly code: "BAD_REQUEST" | "FORBIDDEN" | "CONFLICT",
  ) {
    super(message);
    this.name = "PolicyError";
  }
}

export interface PolicyVersion {
  version: number;
  rules: PolicyRule[];
  createdById: string | null;
  createdAt: Date;
}

export interface PolicyService {
  /** The rules in force for the org (version 0, no rules, when none was ever set). */
  load(orgId: string): Promise<LoadedPolicy>;
  current(actor: Actor, orgId?: string): Promise<PolicyVersion>;
  /** Validates and stores `rules` as the next version; admins and owners only. */
  set(actor: Actor, rules: unknown, opts?: { orgId?: string; expectedVersion?: number }): Promise<PolicyVersion>;
  history(actor: Actor, opts?: { orgId?: string; limit?: number }): Promise<PolicyVersion[]>;
}

function formatIssues(error: { issues: { path: PropertyKey[]; message: string }[] }): string {
  return error.issues
    .slice(0, 5)
    .map(
      (i) => `rules${i.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("")}: ${i.message}`,
    )
    .join("; ");
}

/** The policy in force from its stored row (none: version 0, no rules); a row that does not
 *  validate is not loaded, and the pipeline denies what is not read-only. */
export function policyOf(row: { version: number; rules: unknown } | null): LoadedPolicy {
  if (!row) return { ok: true, version: 0, rules: [] };
  const parsed = PolicyRules.safeParse(row.rules);
  if (!parsed.success) return { ok: false, error: `version ${row.version} is invalid: ${formatIssues(parsed.error)}` };
  return { ok: true, version: row.version, rules: parsed.data };
}

export function createPolicyService(db: Db): PolicyService {
  function orgOf(actor: Actor, orgId?: string): string {
    if (orgId && orgId !== actor.orgId)
      throw new PolicyError("You can only see or change your own org's policy.", "FORBIDDEN");
    return actor.orgId;
  }

  async function load(orgId: string): Promise<LoadedPolicy> {
    try {
      return policyOf(await db.orgPolicy.findFirst({ where: { orgId }, orderBy: { version: "desc" } }));
    } catch (e) {
      return { ok: false, error: e instanceof Error ? e.message.split("\n")[0] : String(e) };
    }
  }

  function toVersion(row: {
    version: number;
    rules: unknown;
    createdById: string | null;
    createdAt: Date;
  }): PolicyVersion {
    const parsed = PolicyRules.safeParse(row.rules);
    return {
      version: row.version,
      rules: parsed.success ? parsed.data : [],
      createdById: row.createdById,
      createdAt: row.createdAt,
    };
  }

  return {
    load,
    async current(actor, orgId) {
      const org = orgOf(actor, orgId);
      const row = await db.orgPolicy.findFirst({ where: { orgId: org }, orderBy: { version: "desc" } });
      return row ? toVersion(row) : { version: 0, rules: [], createdById: null, createdAt: new Date(0) };
    },
    async set(actor, rules, opts = {}) {
      const org = orgOf(actor, opts.orgId);
      if (actor.role === "member")
        throw new PolicyError("Only org admins and owners can change the policy.", "FORBIDDEN");
      const parsed = PolicyRules.safeParse(rules);
      if (!parsed.success) throw new PolicyError(`Invalid policy: ${formatIssues(parsed.error)}`, "BAD_REQUEST");
      // Two admins saving at once race on (orgId, version); the loser retries on the new head
      // unless it asked to save on top of a specific version.
      for (let attempt = 0; attempt < 3; attempt++) {
        const head = await db.orgPolicy.findFirst({
          where: { orgId: org },
          orderBy: { version: "desc" },
          select: { version: true },
        });
        const headVersion = head?.version ?? 0;
        if (opts.expectedVersion !== undefined && opts.expectedVersion !== headVersion) {
          throw new PolicyError(
            `The policy changed meanwhile (now version ${headVersion}); reload and try again.`,
            "CONFLICT",
          );
        }
        try {
          const version = headVersion + 1;
          const [row] = await db.$transaction([
            db.orgPolicy.create({
              data: { orgId: org, version, rules: parsed.data as object[], createdById: actor.userId },
            }),
            db.auditEvent.create({
              data: {
                orgId: org,
                actorId: actor.userId,
                action: "policy.set",
                target: `policy:v${version}`,
                detail: { version, previous: headVersion, ruleCount: parsed.data.length },
              },
            }),
          ]);
          return toVersion(row);
        } catch (e) {
          if (!isUniqueViolation(e) || opts.expectedVersion !== undefined) {
            if (isUniqueViolation(e))
              throw new PolicyError("The policy changed meanwhile; reload and try again.", "CONFLICT");
            throw e;
          }
        }
      }
      throw new PolicyError("The policy is being changed by someone else; try again.", "CONFLICT");
    },
    async history(actor, opts = {}) {
      const org = orgOf(actor, opts.orgId);
      const rows = await db.orgPolicy.findMany({
        where: { orgId: org },
        orderBy: { version: "desc" },
        take: Math.min(opts.limit ?? 20, 100),
      });
      return rows.map(toVersion);
    },
  };
}

function isUniqueViolation(e: unknown): boolean {
  return !!e && typeof e === "object" && (e as { code?: string }).code === "P2002";
}
