// Stored git credentials on SQLite and PostgreSQL: sealed at rest and bound to their row, shown
// only masked, one per person and host, deleted by their person only, audited without the token,
// and the key file made once, readable by its user only.
import { describe, expect, it } from "vitest";
import { mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/pipeline";
import { createGitCredentialService, loadCredentialKey, normaliseHost } from "./git-credentials";

const TOKEN = "glpat-Zz9yX8wV7uT6sR5q";

describe("git credential key and hosts", () => {
  it("makes the key once, 0600, and refuses a damaged one", () => {
    const dir = mkdtempSync(join(tmpdir(), "quiver-gitkey-"));
    const key = loadCredentialKey(dir);
    expect(key).toHaveLength(32);
    expect(statSync(join(dir, "git-credential-key")).mode & 0o777).toBe(0o600);
    expect(loadCredentialKey(dir).equals(key)).toBe(true);
    writeFileSync(join(dir, "git-credential-key"), "short\n");
    expect(() => loadCredentialKey(dir)).toThrow(/damaged/);
  });

  it("takes a host or a URL of it, and nothing else", () => {
    expect(normaliseHost("GitHub.com")).toBe("github.com");
    expect(normaliseHost("https://git.example.com:8443/a/b.git")).toBe("git.example.com:8443");
    for (const bad of ["", "a b", "host/path", "-oProxyCommand=x", "user@host", "ext::sh"])
      expect(normaliseHost(bad), bad).toBeUndefined();
  });
});

describe.each(testDatabases())("git credentials on %s", (provider) => {
  const t = useTestDb(provider);

  it("seals the token, shows it masked, replaces per host, opens only for its person", async () => {
    const db = t.current.db;
    const a = await seedSession(db);
    const b = await seedSession(db);
    const svc = createGitCredentialService(db, loadCredentialKey(mkdtempSync(join(tmpdir(), "quiver-gitkey-"))));
    const saved = await svc.save(a.actor, { host: "https://GitHub.com/org/repo.git", username: "ann", token: TOKEN });
    expect(saved).toMatchObject({ host: "github.com", username: "ann", masked: `••••${TOKEN.slice(-4)}` });
    expect(JSON.stringify(saved)).not.toContain(TOKEN);
    const row = await db.gitCredential.findFirstOrThrow({ where: { userId: a.actor.userId } });
    expect(JSON.stringify(row)).not.toContain(TOKEN);
    expect(await svc.forHost(a.actor.userId, "github.com")).toEqual({ username: "ann", token: TOKEN });
    expect(await svc.forHost(b.actor.userId, "github.com")).toBeNull();
    expect(await svc.has(a.actor.userId, "github.com:443")).toBe(false);
    // A sealed value moved to another person's row does not open.
    await svc.save(b.actor, { host: "github.com", username: "ann", token: "other-token-1234" });
    await db.gitCredential.update({
      where: { userId_host: { userId: b.actor.userId, host: "github.com" } },
      data: { sealed: row.sealed },
    });
    await expect(svc.forHost(b.actor.userId, "github.com")).rejects.toThrow(/cannot be opened/);
    // One per host: saving again replaces.
    await svc.save(a.actor, { host: "github.com", username: "ann2", token: "second-token-abcd" });
    expect((await svc.list(a.actor)).map((c) => [c.host, c.username, c.masked])).toEqual([
      ["github.com", "ann2", "••••abcd"],
    ]);
  });

  it("refuses bad input, deletes only the person's own, and audits without the token", async () => {
    const db = t.current.db;
    const a = await seedSession(db);
    const b = await seedSession(db);
    const svc = createGitCredentialService(db, loadCredentialKey(mkdtempSync(join(tmpdir(), "quiver-gitkey-"))));
    await expect(svc.save(a.actor, { host: "not a host", username: "u", token: TOKEN })).rejects.toThrow(/host name/);
    await expect(svc.save(a.actor, { host: "x.com", username: "u:v", token: TOKEN })).rejects.toThrow(/user name/);
    await expect(svc.save(a.actor, { host: "x.com", username: "u", token: "two\nlines" })).rejects.toThrow(/token/);
    const c = await svc.save(a.actor, { host: "x.com", username: "u", token: TOKEN });
    await expect(svc.remove(b.actor, c.id)).rejects.toThrow(/No such credential/);
    await svc.remove(a.actor, c.id);
    expect(await svc.list(a.actor)).toEqual([]);
    const audit = await db.auditEvent.findMany({ where: { actorId: a.actor.userId }, orderBy: { createdAt: "asc" } });
    expect(audit.map((r) => r.action)).toEqual(["git.credential.saved", "git.credential.removed"]);
    expect(JSON.stringify(audit)).not.toContain(TOKEN);
  });
});
