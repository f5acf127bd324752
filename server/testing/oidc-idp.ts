// A real OpenID Connect identity provider for tests, built on `oidc-provider` (the certified
// implementation): an issuer on a local port with discovery, JWKS, authorization, token and
// userinfo endpoints, clients a test registers, people with verified and unverified emails, and
// the interaction (login, then consent) served as plain HTML forms, so a test drives it through
// a real browser or over HTTP (`authorize`). Nothing here is faked: tokens are signed with a
// fresh RSA key and a relying party validates them as it would against Okta or Keycloak.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import Provider, { type Adapter, type AdapterPayload, type JWK } from "oidc-provider";

export interface IdpUser {
  /** What the person types in the login form. */
  login: string;
  password: string;
  email: string;
  emailVerified: boolean;
  name: string;
}

export interface IdpClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

export interface TestIdp {
  /** `http://127.0.0.1:<port>`: discovery at `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  addUser(user: IdpUser): void;
  registerClient(client: IdpClient): void;
  /**
   * Drives one sign-in over HTTP, as a browser would: from the relying party's authorization URL
   * through login (and consent, unless `consent: false` denies it) to the redirect back to the
   * relying party, whose URL (with `code` and `state`, or `error`) is returned.
   */
  authorize(authorizationUrl: string, who: { login: string; password?: string; consent?: boolean }): Promise<string>;
  close(): Promise<void>;
}

/** Tokens, grants, sessions and interactions in memory, one store per IdP (tests run several). */
class MemoryAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly store: Map<string, { payload: AdapterPayload; expiresAt: number }>,
    private readonly clients: Map<string, AdapterPayload>,
  ) {}
  private key = (id: string) => `${this.model}:${id}`;
  async upsert(id: string, payload: AdapterPayload, expiresIn?: number) {
    this.store.set(this.key(id), { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
  }
  async find(id: string) {
    if (this.model === "Client") return this.clients.get(id);
    const entry = this.store.get(this.key(id));
    if (!entry || entry.expiresAt <= Date.now()) return undefined;
    return entry.payload;
  }
  private findBy(match: (p: AdapterPayload) => boolean) {
    for (const [key, entry] of this.store)
      if (key.startsWith(`${this.model}:`) && entry.expiresAt > Date.now() && match(entry.payload))
        return entry.payload;
    return undefined;
  }
  findByUid = async (uid: string) => this.findBy((p) => p.uid === uid);
  findByUserCode = async (code: string) => this.findBy((p) => p.userCode === code);
  async consume(id: string) {
    const entry = this.store.get(this.key(id));
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    this.store.delete(this.key(id));
  }
  async revokeByGrantId(grantId: string) {
    for (const [key, entry] of this.store) if (entry.payload.grantId === grantId) this.store.delete(key);
  }
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(res: ServerResponse, prompt: string, title: string, body: string, status = 200) {
  // The prompt in a header lets the HTTP driver tell the two forms apart without parsing HTML.
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "x-idp-prompt": prompt,
    "cache-control": "no-store",
  });
  res.end(
    `<!doctype html><html><head><title>${esc(title)}</title></head><body><h1>${esc(title)}</h1>${body}</body></html>`,
  );
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** Starts the identity provider on 127.0.0.1 (`port` 0: any free port). */
export async function startOidcIdp(options: { port?: number; users?: IdpUser[] } = {}): Promise<TestIdp> {
  const users = new Map<string, IdpUser>();
  const clients = new Map<string, AdapterPayload>();
  const store = new Map<string, { payload: AdapterPayload; expiresAt: number }>();
  for (const u of options.users ?? []) users.set(u.login, u);

  // Listening first: the issuer names the port.
  const server = createServer();
  await new Promise<void>((ok, fail) => server.once("error", fail).listen(options.port ?? 0, "127.0.0.1", () => ok()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const signingKey = {
    ...(generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" }) as JWK),
    kid: "test-idp",
    use: "sig",
    alg: "RS256",
  };
  const provider = new Provider(issuer, {
    adapter: (model: string) => new MemoryAdapter(model, store, clients),
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    features: { devInteractions: { enabled: false } },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    scopes: ["openid", "email", "profile", "offline_access"],
    interactions: { url: (_ctx, i) => `/interaction/${i.uid}` },
    // Set, so the provider does not print a notice per kind on first use.
    ttl: {
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      AccessToken: 600,
      IdToken: 600,
      AuthorizationCode: 60,
      RefreshToken: 3600,
    },
    async findAccount(_ctx, sub) {
      const user = users.get(sub);
      if (!user) return undefined;
      return {
        accountId: sub,
        claims: async () => ({ sub, email: user.email, email_verified: user.emailVerified, name: user.name }),
      };
    },
    async renderError(ctx, out) {
      ctx.type = "html";
      ctx.body = `<!doctype html><h1>Identity provider error</h1><p>${esc(String(out.error))}: ${esc(String(out.error_description ?? ""))}</p>`;
    },
  });

  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if ((req.url ?? "").startsWith("/interaction/")) {
      interaction(provider, req, res).catch((err: Error) =>
        page(res, "error", "Sign-in failed", `<p>${esc(err.message)}</p>`, 400),
      );
      return;
    }
    void provider.callback()(req, res);
  });

  return {
    issuer,
    addUser: (u) => void users.set(u.login, u),
    registerClient(c) {
      clients.set(c.clientId, {
        client_id: c.clientId,
        client_secret: c.clientSecret,
        redirect_uris: c.redirectUris,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      });
    },
    authorize: (url, who) => driveAuthorization(issuer, url, who),
    close: () => new Promise<void>((ok) => (server.closeAllConnections(), server.close(() => ok()))),
  };

  // The login and consent pages (GET) and their answers (POST), as the provider's docs describe.
  async function interaction(p: Provider, req: IncomingMessage, res: ServerResponse) {
    const details = await p.interactionDetails(req, res);
    const { uid, prompt, params, session } = details;
    const action = (req.url ?? "").split("?")[0].split("/")[3];
    if (req.method === "GET") {
      if (prompt.name === "login") return loginPage(res, uid, "");
      return page(
        res,
        "consent",
        "Allow access?",
        `<p>${esc(String(params.client_id))} asks for: ${esc(String(params.scope))}</p>
<form method="post" action="/interaction/${uid}/confirm"><button type="submit">Allow</button></form>
<form method="post" action="/interaction/${uid}/deny"><button type="submit">Deny</button></form>`,
      );
    }
    const form = await readForm(req);
    if (action === "login" && prompt.name === "login") {
      const user = users.get(form.get("login") ?? "");
      if (!user || user.password !== form.get("password")) return loginPage(res, uid, "Wrong login or password.", 401);
      return p.interactionFinished(req, res, { login: { accountId: user.login } }, { mergeWithLastSubmission: false });
    }
    if (action === "deny")
      return p.interactionFinished(
        req,
        res,
        { error: "access_denied", error_description: "The person denied access." },
        { mergeWithLastSubmission: false },
      );
    if (action === "confirm" && prompt.name === "consent") {
      const grant = details.grantId
        ? await p.Grant.find(details.grantId)
        : new p.Grant({ accountId: session!.accountId, clientId: String(params.client_id) });
      if (!grant) throw new Error("grant not found");
      const missing = prompt.details as {
        missingOIDCScope?: string[];
        missingOIDCClaims?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
        grant.addResourceScope(indicator, scopes.join(" "));
      return p.interactionFinished(
        req,
        res,
        { consent: { grantId: await grant.save() } },
        { mergeWithLastSubmission: true },
      );
    }
    throw new Error(`unexpected ${action} during ${prompt.name}`);
  }
}

function loginPage(res: ServerResponse, uid: string, error: string, status = 200) {
  page(
    res,
    "login",
    "Sign in to the test identity provider",
    `${error ? `<p role="alert">${esc(error)}</p>` : ""}
<form method="post" action="/interaction/${uid}/login">
<label>Login <input name="login" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button></form>`,
    status,
  );
}

/** Follows the IdP's redirects with a cookie jar, answering the forms, until it sends the browser away. */
async function driveAuthorization(
  issuer: string,
  start: string,
  who: { login: string; password?: string; consent?: boolean },
): Promise<string> {
  const jar = new Map<string, string>();
  const send = async (url: string, form?: Record<string, string>) => {
    const res = await fetch(url, {
      method: form ? "POST" : "GET",
      redirect: "manual",
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; "),
        ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = pair.indexOf("=");
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return res;
  };
  let res = await send(start);
  for (let step = 0; step < 12; step++) {
    const location = res.headers.get("location");
    if (location) {
      const next = new URL(location, res.url || issuer);
      if (next.origin !== new URL(issuer).origin) return next.toString();
      res = await send(next.toString());
      continue;
    }
    const prompt = res.headers.get("x-idp-prompt");
    const here = res.url.split("?")[0];
    if (prompt === "login" && res.status === 200)
      res = await send(`${here}/login`, { login: who.login, password: who.password ?? "" });
    else if (prompt === "consent") res = await send(`${here}/${who.consent === false ? "deny" : "confirm"}`, {});
    else
      throw new Error(
        `the identity provider answered ${res.status}: ${(await res.text())
          .replace(/<[^>]+>/g, " ")
          .trim()
          .slice(0, 300)}`,
      );
  }
  throw new Error("too many redirects at the identity provider");
}
