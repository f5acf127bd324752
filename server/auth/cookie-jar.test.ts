// A live preview is a subdomain of the IDE, so the agent's page can set a cookie for the IDE's
// host (`Domain=<ide host>`), which the browser then sends first when its Path is longer. These
// check, on a real server with accounts, that such a planted sign-in never decides who the
// request is: over https only a `__Host-` cookie (which no subdomain can set) is Quiver's, and
// over http a cookie that comes twice counts for no one. On the old code the planted cookie,
// another person's valid sign-in, made the request that person's.
import { describe, expect, it } from "vitest";
import { testDatabases } from "../testing/db";
import { useAccountsServer } from "../testing/accounts";
import { ownCookieHeader, ownSetCookie } from "./cookie-jar";

describe("Quiver's cookies as the server reads them", () => {
  it("over http, drops a cookie of Quiver's that comes twice and keeps the rest", () => {
    expect(ownCookieHeader("quiver.session_token=PLANTED; quiver.session_token=REAL; theme=dark", false)).toBe(
      "theme=dark",
    );
    expect(ownCookieHeader("quiver.session_token=REAL; theme=dark; quiver_view=v", false)).toBe(
      "quiver.session_token=REAL; theme=dark; quiver_view=v",
    );
  });

  it("over https, takes only __Host- cookies as Quiver's", () => {
    expect(
      ownCookieHeader(
        "quiver.session_token=PLANTED; __Host-quiver.session_token=REAL; a=1; __Host-quiver_view=v",
        true,
      ),
    ).toBe("quiver.session_token=REAL; a=1; quiver_view=v");
    expect(ownCookieHeader("quiver_owner=PLANTED; quiver.session_data=x", true)).toBe("");
    // Other spellings a subdomain can set, or better-auth's readers also try: never Quiver's.
    for (const planted of [
      "__Secure-quiver.session_token",
      "__secure-quiver.session_token",
      "__HOST-quiver.session_token",
      "quiver-session_token",
      "__Secure-quiver_owner",
    ])
      expect(ownCookieHeader(`${planted}=P; __Host-quiver.session_token=REAL`, true), planted).toBe(
        "quiver.session_token=REAL",
      );
    for (const planted of ["__Secure-quiver.session_token", "__Host-quiver.session_token", "__Secure-quiver_view"])
      expect(ownCookieHeader(`${planted}=P; quiver.session_token=REAL`, false), planted).toBe(
        "quiver.session_token=REAL",
      );
  });

  it("over https, names Quiver's Set-Cookie __Host- with Path=/ and Secure, and no Domain", () => {
    expect(ownSetCookie("quiver.session_token=t; Max-Age=60; Path=/; HttpOnly; SameSite=Lax", true)).toBe(
      "__Host-quiver.session_token=t; Max-Age=60; HttpOnly; SameSite=Lax; Path=/; Secure",
    );
    expect(ownSetCookie("quiver_view=; Domain=ide.example; Path=/; Max-Age=0", true)).toBe(
      "__Host-quiver_view=; Max-Age=0; Path=/; Secure",
    );
    expect(ownSetCookie("other=1; Path=/x", true)).toBe("other=1; Path=/x; Secure");
    expect(ownSetCookie("quiver.session_token=t; Path=/", false)).toBe("quiver.session_token=t; Path=/");
  });
});

describe.each(testDatabases())("a sign-in planted from a preview on %s", (provider) => {
  const server = useAccountsServer(provider, { name: "cookie-jar" });
  const url = () => server.quiver.url;
  const session = (cookie: string) => cookie.match(/quiver\.session_token=([^;]+)/)![1];

  const whoami = async (cookie: string, https = false) => {
    const res = await fetch(`${url()}/api/trpc/auth.whoami`, {
      headers: { cookie, ...(https ? { "x-forwarded-proto": "https" } : {}) },
    });
    return ((await res.json()) as { result: { data: { kind: string; userId?: string } } }).result.data;
  };

  it("over http, another person's sign-in sent beside the person's own decides nothing", async () => {
    const { headers, fixture } = server.people;
    const mine = session(headers.member.cookie);
    const planted = session(headers.otherOrg.cookie);
    expect(await whoami(`quiver.session_token=${mine}`)).toEqual({ kind: "member", userId: fixture.users.member });
    // The planted one first, as a browser sends a cookie of a longer Path.
    const both = await whoami(`quiver.session_token=${planted}; quiver.session_token=${mine}`);
    expect(both.kind).toBe("refused");
  });

  it("over https, only the __Host- cookie is the person's; a plain one is not Quiver's", async () => {
    const { headers, fixture } = server.people;
    const mine = session(headers.member.cookie);
    const planted = session(headers.otherOrg.cookie);
    expect(await whoami(`quiver.session_token=${planted}; __Host-quiver.session_token=${mine}`, true)).toEqual({
      kind: "member",
      userId: fixture.users.member,
    });
    expect((await whoami(`quiver.session_token=${planted}`, true)).kind).toBe("refused");
  });

  it("over https, a sign-up answers with a __Host- cookie the next request is taken with", async () => {
    const email = `jar-${Date.now()}@table.test`;
    const res = await fetch(`${url()}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: url(), "x-forwarded-proto": "https" },
      body: JSON.stringify({ name: "Jar", email, password: "cookie jar password 1" }),
    });
    expect(res.status).toBe(200);
    const set = res.headers.getSetCookie().find((c) => c.includes("session_token"))!;
    expect(set).toMatch(/^__Host-quiver\.session_token=[^;]+;/);
    expect(set).toMatch(/; Path=\/; Secure$/);
    expect(set).not.toMatch(/domain=/i);
    const userId = (await server.db.db.user.findUniqueOrThrow({ where: { email } })).id;
    expect(await whoami(set.split(";")[0], true)).toEqual({ kind: "member", userId });
    // The same cookie without its prefix is nobody's over https.
    expect((await whoami(set.split(";")[0].replace("__Host-", ""), true)).kind).toBe("refused");
  });
});
