// A session named by a request is looked up through plain SQL when the database's provider is
// known (authorize-resources.ts), on real SQLite and PostgreSQL, in this thread and through the
// query thread: the same resource as Prisma's lookup, a missing one for an unknown id, and an
// id that is SQL text is only ever a value.
import { describe, expect, it } from "vitest";
import { openDb } from "../db";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/hub";
import { loadResource } from "./authorize-resources";
import type { Subject } from "./authorize";

describe.each(testDatabases())("a session's resource on %s", (provider) => {
  const t = useTestDb(provider);

  it("reads the session's org and creator as Prisma does, here and on the query thread", async () => {
    const { sessionId, userId, orgId } = await seedSession(t.current.db);
    // Another session of another org and person: the lookup must not pick the first row.
    await seedSession(t.current.db);
    const subject: Subject = { kind: "person", actor: { userId, orgId, role: "owner" } };
    const ref = { kind: "session" as const, id: sessionId };
    const expected = { kind: "session", sessionId, orgId, creatorId: userId };
    expect(await loadResource(t.current.db, subject, ref)).toEqual(expected);
    expect(await loadResource(t.current.db, subject, ref, provider)).toEqual(expected);
    const threaded = await openDb(t.current.url, { thread: true });
    try {
      expect(await loadResource(threaded.db, subject, ref, provider)).toEqual(expected);
    } finally {
      await threaded.close();
    }
  });

  it("answers missing for an unknown id and for one that is SQL text", async () => {
    const { userId, orgId } = await seedSession(t.current.db);
    const subject: Subject = { kind: "person", actor: { userId, orgId, role: "owner" } };
    for (const id of ["nosuchsession", `x' OR '1'='1`, `x" OR 1=1 --`]) {
      const found = await loadResource(t.current.db, subject, { kind: "session", id }, provider);
      expect(found).toEqual({ kind: "missing", message: `No session ${id}.` });
    }
  });
});
