// GET /api/audit/export: the org's audit events as JSON Lines, a download the server streams a
// page at a time (never the whole trail in memory), with the audit page's filters as query
// parameters (person, kind, from, to). Decided by the same authorization as the page
// (authorize(): "audit.read" on the person's active org; members get 403, strangers 401), asked
// again every few seconds while the download lasts.
import type { IncomingMessage, ServerResponse } from "node:http";
import { once } from "node:events";
import { TRPCError } from "@trpc/server";
import type { Doors } from "../auth/authorize-doors";
import { AuditFilterInput, auditFilterOf } from "../api/routers/audit";
import { createAuditService } from "./audit";
import type { Db } from "../db";

export const AUDIT_EXPORT_PATH = "/api/audit/export";

/** How often a download under way asks again whether its person may still read the trail. */
const RECHECK_MS = 5_000;

export function createAuditExport(deps: {
  db: Db;
  doors: Pick<Doors, "request">;
  log(line: string): void;
  recheckMs?: number;
}) {
  const audit = createAuditService(deps.db);
  const fail = (res: ServerResponse, status: number, message: string) => {
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify({ error: message }));
  };
  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "GET") return fail(res, 405, "GET only");
    const answer = await deps.doors.request(req, "audit.read", { kind: "activeOrg" });
    if (!answer.ok) return fail(res, answer.status, answer.message);
    const orgId = answer.grant.actor!.orgId;
    const params = Object.fromEntries(new URL(req.url ?? "/", "http://x").searchParams);
    const parsed = AuditFilterInput.safeParse(params);
    if (!parsed.success)
      return fail(res, 400, parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
    let filter;
    try {
      filter = auditFilterOf(parsed.data);
    } catch (err) {
      return fail(res, 400, err instanceof TRPCError ? err.message : "bad filter");
    }
    const day = new Date().toISOString().slice(0, 10);
    res.writeHead(200, {
      "content-type": "application/x-ndjson; charset=utf-8",
      "content-disposition": `attachment; filename="quiver-audit-${day}.jsonl"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    });
    const gone = new AbortController();
    res.once("close", () => gone.abort());
    // A download outlives no change of access (an admin removed or made a member mid-way): the
    // rest of the trail is theirs only while they may still read it, as the IDE's sockets are.
    const recheckMs = deps.recheckMs ?? RECHECK_MS;
    let checkedAt = Date.now();
    const stillAllowed = async () => {
      if (Date.now() - checkedAt < recheckMs) return true;
      checkedAt = Date.now();
      const again = await deps.doors.request(req, "audit.read", { kind: "activeOrg" });
      return again.ok && again.grant.actor?.orgId === orgId;
    };
    try {
      for await (const line of audit.lines(orgId, filter)) {
        if (gone.signal.aborted) return;
        if (!(await stillAllowed())) {
          deps.log("audit export cut off: its person may no longer read the org's audit trail");
          res.destroy(new Error("access to the audit trail ended"));
          return;
        }
        // A slow reader holds the next page back (no unbounded buffering).
        if (!res.write(line)) await once(res, "drain", { signal: gone.signal });
      }
      res.end();
    } catch (err) {
      if (gone.signal.aborted) return;
      deps.log(`audit export failed: ${(err as Error).message}`);
      res.destroy(err as Error);
    }
  };
}
