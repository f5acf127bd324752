// Stored git credentials on SQLite and PostgreSQL: sealed at rest and bound to their row, shown
// only masked, one per person, host and scope, deleted by their person only, audited without the
// token, and the key file made once, readable by its user only. A scoped credential reaches only
// remotes under its path: the longest scope wins, and no spelling of a path (case, `.git`, `..`,
// percent-escapes, `//`, a look-alike owner) widens one.
import { describe, expect, it } from "vitest";
import { mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/pipeline";
import { parseRemoteUrl, type RemoteUrl } from "../protocol/git-remote";
import { scopeCovers } from "../protocol/git-scope";
import {
  createGitCredentialService,
  loadCredentialKey,
  normaliseHost,
  parseCredentialTarget,
  seal,
} from "./git-credentials";

const TOKEN = "glpat-Zz9yX8wV7uT6sR5q";

const remote = (url: string) => parseRemoteUrl(url) as RemoteUrl;

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
    const repo = remote("https://github.com/org/repo.git");
    // A URL with a path is a scope now: org/repo, and nothing else on github.com.
    expect(saved).toMatchObject({ scope: "org/repo", target: "github.com/org/repo" });
    expect(await svc.forRemote(a.actor.userId, repo)).toEqual({ username: "ann", token: TOKEN, scope: "org/repo" });
    expect(await svc.forRemote(a.actor.userId, remote("https://github.com/org/other.git"))).toBeNull();
    expect(await svc.forRemote(b.actor.userId, repo)).toBeNull();
    expect(await svc.match(a.actor.userId, remote("https://github.com:8443/org/repo.git"))).toBeNull();
    // A sealed value moved to another person's row does not open.
    await svc.save(b.actor, { host: "github.com/org/repo", username: "ann", token: "other-token-1234" });
    await db.gitCredential.update({
      where: { userId_host_scope: { userId: b.actor.userId, host: "github.com", scope: "org/repo" } },
      data: { sealed: row.sealed },
    });
    await expect(svc.forRemote(b.actor.userId, repo)).rejects.toThrow(/cannot be opened/);
    // One per host and scope: saving again replaces.
    await svc.save(a.actor, { host: "github.com/org/repo", username: "ann2", token: "second-token-abcd" });
    expect((await svc.list(a.actor)).map((c) => [c.target, c.username, c.masked])).toEqual([
      ["github.com/org/repo", "ann2", "••••abcd"],
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

  it("picks the longest scope covering the remote, a host-wide one last, each sealed to its scope", async () => {
    const db = t.current.db;
    const a = await seedSession(db);
    const key = loadCredentialKey(mkdtempSync(join(tmpdir(), "quiver-gitkey-")));
    const svc = createGitCredentialService(db, key);
    await svc.save(a.actor, { host: "GitHub.com", username: "all", token: "token-host-wide1" });
    await svc.save(a.actor, { host: "https://github.com/myorg/", username: "org", token: "token-myorg-0002" });
    await svc.save(a.actor, { host: "github.com/myorg/app", username: "app", token: "token-myapp-0003" });
    const who = async (url: string) => (await svc.forRemote(a.actor.userId, remote(url)))?.username ?? null;
    expect(await who("https://GITHUB.com/myorg/app.git")).toBe("app");
    expect(await who("https://github.com/myorg/app")).toBe("app");
    expect(await who("https://github.com/myorg/app/")).toBe("app");
    expect(await who("https://github.com/myorg/app-evil.git")).toBe("org");
    expect(await who("https://github.com/myorg/other.git")).toBe("org");
    expect(await who("https://github.com/myorg-evil/app.git")).toBe("all");
    expect(await who("https://github.com/attacker/x.git")).toBe("all");
    // Tricks that would reach another owner through a scoped path get only the host-wide one.
    for (const url of [
      "https://github.com/myorg/../attacker/x.git",
      "https://github.com/myorg/%2e%2e/attacker/x.git",
      "https://github.com/myorg/..%2Fattacker/x.git",
      "https://github.com/myorg%2Fapp.git",
      "https://github.com//myorg/app.git",
      "https://github.com/myorg//app.git",
      "https://github.com/MyOrg/app.git",
      "https://github.com/myorg/app%2ehidden.git",
    ])
      expect(await who(url), url).toBe("all");
    // Without the host-wide credential those get nothing at all.
    const hostWide = (await svc.list(a.actor)).find((c) => c.scope === "")!;
    await svc.remove(a.actor, hostWide.id);
    expect(await who("https://github.com/myorg/%2e%2e/attacker/x.git")).toBeNull();
    expect(await who("https://github.com/myorg-evil/app.git")).toBeNull();
    expect(await svc.match(a.actor.userId, remote("https://github.com/myorg/x"))).toMatchObject({
      target: "github.com/myorg",
    });
    // A scoped sealed value moved onto a row of a wider scope does not open.
    const rows = await db.gitCredential.findMany({ where: { userId: a.actor.userId }, orderBy: { scope: "asc" } });
    expect(rows.map((r) => r.scope)).toEqual(["myorg", "myorg/app"]);
    await db.gitCredential.update({ where: { id: rows[0].id }, data: { sealed: rows[1].sealed, username: "app" } });
    await expect(svc.forRemote(a.actor.userId, remote("https://github.com/myorg/x"))).rejects.toThrow(
      /cannot be opened/,
    );
    // A row stored before scopes (host-wide, sealed without one) still opens.
    const bound = Buffer.from(JSON.stringify(["quiver-git-credential", a.actor.userId, "git.example.com", "old"]));
    await db.gitCredential.create({
      data: {
        userId: a.actor.userId,
        host: "git.example.com",
        username: "old",
        sealed: seal(key, TOKEN, bound),
        hint: "5q",
      },
    });
    expect(await svc.forRemote(a.actor.userId, remote("https://git.example.com/any/repo.git"))).toEqual({
      username: "old",
      token: TOKEN,
      scope: "",
    });
  });
});

describe("credential scopes", () => {
  it("reads a host, host:port or URL with a path, and refuses paths that could mean another", () => {
    expect(parseCredentialTarget("GitHub.com")).toEqual({ host: "github.com", scope: "" });
    expect(parseCredentialTarget("https://github.com/myorg/")).toEqual({ host: "github.com", scope: "myorg" });
    expect(parseCredentialTarget("github.com/myorg/app.git")).toEqual({ host: "github.com", scope: "myorg/app" });
    expect(parseCredentialTarget("https://GIT.example.com:8443/MyOrg/")).toEqual({
      host: "git.example.com:8443",
      scope: "MyOrg",
    });
    for (const bad of [
      "github.com/myorg%2Fapp",
      "github.com/myorg/../attacker",
      "github.com/myorg/%2e%2e/attacker",
      "github.com/myorg/./app",
      "github.com//myorg",
      "github.com/my org",
      "github.com\\myorg",
      "user@github.com/myorg",
      "https://user:pw@github.com/myorg",
      "https://github.com/myorg?x=1",
      "ssh://github.com/myorg",
      "-oProxyCommand=x",
      "ext::sh",
    ])
      expect(parseCredentialTarget(bad), bad).toHaveProperty("error");
  });

  it("covers whole segments only, in the path's own case, with .git ignored", () => {
    const yes: [string, string][] = [
      ["myorg", "https://h.example/myorg/app.git"],
      ["myorg", "https://h.example/myorg/group/app"],
      ["myorg/app", "https://h.example/myorg/app.git"],
      ["myorg/app", "https://h.example/myorg/app/"],
      ["", "https://h.example/%2e%2e/anything"],
    ];
    const no: [string, string][] = [
      ["myorg", "https://h.example/myorg-evil/app.git"],
      ["myorg", "https://h.example/myorgx"],
      ["myorg", "https://h.example/MYORG/app"],
      ["myorg/app", "https://h.example/myorg/app-evil.git"],
      ["myorg/app", "https://h.example/myorg/app.github"],
      ["myorg/app", "https://h.example/myorg"],
      ["myorg", "https://h.example/myorg%2F..%2Fevil/x"],
      ["myorg", "https://h.example/myorg/x;y"],
      ["myorg", "not a url"],
      ["../x", "https://h.example/../x/y"],
    ];
    for (const [scope, url] of yes) expect(scopeCovers(scope, url), `${scope} ${url}`).toBe(true);
    for (const [scope, url] of no) expect(scopeCovers(scope, url), `${scope} ${url}`).toBe(false);
  });
});
