// The audit export outlives no change of access: a download is cut off once its person may no
// longer read the trail (an admin made a member, or removed, mid-way), instead of streaming the
// rest of a snapshot they may no longer see. A real database and HTTP server; the door's answer
// is what changes (its own checks are tested with the doors).
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Actor } from "./types";
import { useTestDb } from "../testing/db";
import { seedSession } from "../testing/pipeline";
import { createAuditExport } from "./audit-export";

describe("the audit export", () => {
  const t = useTestDb("sqlite");
  let server: Server | undefined;
  afterEach(() => server?.close());

  async function serve(allowed: () => boolean, orgId: string): Promise<{ url: string; log: string[] }> {
    const log: string[] = [];
    const doors = {
      request: async () =>
        allowed()
          ? { ok: true as const, grant: { actor: { orgId } as Actor } }
          : { ok: false as const, status: 403, message: "admins only" },
    };
    const handle = createAuditExport({
      db: t.current.db,
      doors: doors as never,
      log: (l) => log.push(l),
      recheckMs: 0,
    });
    server = createServer((req, res) => void handle(req, res));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/audit/export`, log };
  }

  it("streams the whole trail while its person may read it, and is cut off once they may not", async () => {
    const { org } = await seedSession(t.current.db);
    const rows = Array.from({ length: 1000 }, (_, i) => ({ orgId: org.id, action: "share.created", detail: { i } }));
    await t.current.db.auditEvent.createMany({ data: rows });

    // The door says yes to the first `answers` checks: the download's own, then one a line here.
    let answers = Infinity;
    const { url, log } = await serve(() => answers-- > 0, org.id);
    const whole = await (await fetch(url)).text();
    expect(whole.trim().split("\n")).toHaveLength(1000);

    // Made a member after 300 lines: the rest never comes, and the download fails.
    answers = 301;
    const res = await fetch(url);
    expect(res.status).toBe(200);
    let received = "";
    await expect(
      (async () => {
        const decoder = new TextDecoder();
        const reader = res.body!.getReader();
        for (let r = await reader.read(); !r.done; r = await reader.read())
          received += decoder.decode(r.value, { stream: true });
      })(),
    ).rejects.toThrow();
    expect(received.split("\n").length - 1).toBeLessThanOrEqual(300);
    expect(log.join("\n")).toMatch(/cut off/);
  }, 30_000);
});
