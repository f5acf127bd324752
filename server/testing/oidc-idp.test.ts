// The test identity provider is a real one: discovery, the login + consent interaction over
// HTTP, a code exchanged at its token endpoint, an ID token that verifies against its JWKS, and
// userinfo with the person's email and whether it is verified.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { startOidcIdp, type TestIdp } from "./oidc-idp";

describe("test OIDC identity provider", () => {
  let idp: TestIdp;
  const redirect = "http://127.0.0.1:9/callback";
  beforeAll(async () => {
    idp = await startOidcIdp({
      users: [{ login: "ada", password: "pw", email: "ada@acme.test", emailVerified: true, name: "Ada" }],
    });
    idp.registerClient({ clientId: "quiver", clientSecret: "s3cret-s3cret", redirectUris: [redirect] });
  });
  afterAll(() => idp.close());

  const authorizationUrl = async (state: string) => {
    const doc = await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json();
    const url = new URL(doc.authorization_endpoint);
    url.search = new URLSearchParams({
      client_id: "quiver",
      response_type: "code",
      scope: "openid email profile",
      redirect_uri: redirect,
      state,
    }).toString();
    return { doc, url: url.toString() };
  };

  it("signs a person in: login, consent, code, token, verified ID token, userinfo", async () => {
    const { doc, url } = await authorizationUrl("st1");
    expect(doc.issuer).toBe(idp.issuer);
    const back = new URL(await idp.authorize(url, { login: "ada", password: "pw" }));
    expect(back.origin + back.pathname).toBe(redirect);
    expect(back.searchParams.get("state")).toBe("st1");
    const code = back.searchParams.get("code")!;
    const tokenRes = await fetch(doc.token_endpoint, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from("quiver:s3cret-s3cret").toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirect }).toString(),
    });
    const tokens = await tokenRes.json();
    expect(tokenRes.status, JSON.stringify(tokens)).toBe(200);
    const { payload } = await jwtVerify(tokens.id_token, createRemoteJWKSet(new URL(doc.jwks_uri)), {
      issuer: idp.issuer,
      audience: "quiver",
    });
    expect(payload.sub).toBe("ada");
    const info = await (
      await fetch(doc.userinfo_endpoint, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    ).json();
    expect(info).toMatchObject({ sub: "ada", email: "ada@acme.test", email_verified: true, name: "Ada" });
  });

  it("refuses a wrong password and reports a denied consent to the client", async () => {
    const { url } = await authorizationUrl("st2");
    await expect(idp.authorize(url, { login: "ada", password: "nope" })).rejects.toThrow(/Wrong login or password/);
    const denied = new URL(
      await idp.authorize((await authorizationUrl("st3")).url, { login: "ada", password: "pw", consent: false }),
    );
    expect(denied.searchParams.get("error")).toBe("access_denied");
    expect(denied.searchParams.get("state")).toBe("st3");
  });

  it("refuses a client secret it was not given", async () => {
    const { doc } = await authorizationUrl("st4");
    const res = await fetch(doc.token_endpoint, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from("quiver:wrong").toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ grant_type: "authorization_code", code: "x", redirect_uri: redirect }).toString(),
    });
    expect((await res.json()).error).toBe("invalid_client");
  });
});
