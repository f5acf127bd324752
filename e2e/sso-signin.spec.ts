// Single sign-on through a real browser, against the accounts server (QUIVER_AUTH=accounts,
// playwright.config.ts) and a real OpenID Connect provider started here (server/testing/oidc-idp.ts,
// listed in QUIVER_SSO_PRIVATE_ISSUERS): an owner sets SSO up at /settings/sign-in and tests the
// connection; then, in a fresh browser, "Sign in with SSO" goes to the provider, its login and
// consent forms are filled, the callback lands in Quiver signed in, and the owner's password
// account is now linked to the provider (read from the server's database). The email domain
// admits nobody until the TXT record the page shows is in DNS (a real DNS server started here,
// server/testing/dns-server.ts, QUIVER_SSO_DNS_SERVERS) and Verify finds it.
import { test, expect, type APIRequestContext } from "@playwright/test";
import Database from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { startOidcIdp, type TestIdp } from "../server/testing/oidc-idp";
import { startTestDns, type TestDns } from "../server/testing/dns-server";

const BASE = `http://127.0.0.1:${process.env.E2E_ACCOUNTS_PORT ?? 3219}`;
const IDP_PORT = 3220;
const DNS_PORT = 3221;
const run = randomBytes(4).toString("hex");
const domain = `sso-${run}.test`;
const owner = { name: "Olga", email: `olga@${domain}`, password: "owner-password-1" };

let idp: TestIdp;
let dns: TestDns;
test.beforeAll(async () => {
  dns = await startTestDns(DNS_PORT);
  idp = await startOidcIdp({
    port: IDP_PORT,
    users: [
      { login: "olga", password: "idp-password", email: owner.email, emailVerified: true, name: "Olga at the IdP" },
    ],
  });
});
test.afterAll(async () => {
  await idp?.close();
  await dns?.close();
});

/** An account of one's own on the accounts server: the first owner if there is none yet, else by open sign-up. */
async function signUp(request: APIRequestContext) {
  const headers = { origin: BASE, "content-type": "application/json" };
  const first = await request.post(`${BASE}/api/auth/first-owner`, { headers, data: owner });
  if (first.ok()) return;
  const res = await request.post(`${BASE}/api/auth/sign-up/email`, { headers, data: owner });
  expect(res.ok(), await res.text()).toBe(true);
}

test("an owner sets up OIDC, then signs in with SSO through the IdP's login and consent, account linked", async ({
  browser,
}) => {
  const admin = await browser.newContext({ baseURL: BASE });
  const page = await admin.newPage();
  await signUp(page.request);

  await page.goto("/settings/sign-in");
  await expect(page.getByTestId("sso-settings")).toBeVisible();
  await page.getByTestId("sso-issuer").fill(idp.issuer);
  await page.getByTestId("sso-test").click();
  await expect(page.getByTestId("sso-test-result")).toContainText(`names ${idp.issuer}`);
  await page.getByTestId("sso-client-id").fill("quiver-e2e");
  await page.getByTestId("sso-client-secret").fill("e2e-client-secret");
  await page.getByTestId("sso-domains").fill(domain);
  await page.getByTestId("sso-save").click();
  await expect(page.getByTestId("sso-saved")).toBeVisible();
  // The secret is not shown back, only that one is stored.
  await expect(page.getByTestId("sso-client-secret")).toHaveValue("");
  await expect(page.getByTestId("sso-client-secret")).toHaveAttribute("placeholder", /stored/);
  // The domain waits for its DNS record: Verify says what is missing until it is there.
  const listed = page.locator(`[data-testid="sso-domain"][data-domain="${domain}"]`);
  await expect(listed).toHaveAttribute("data-verified", "false");
  await listed.getByTestId("sso-verify").click();
  await expect(listed.getByTestId("sso-verify-result")).toContainText(
    `No TXT record at _quiver-verification.${domain}`,
  );
  const name = (await listed.getByTestId("sso-record-name").textContent())!;
  dns.records.set(name, [(await listed.getByTestId("sso-record-value").textContent())!]);
  await listed.getByTestId("sso-verify").click();
  await expect(listed).toHaveAttribute("data-verified", "true");
  const redirectUri = (await page.getByTestId("sso-redirect-uri").textContent())!.trim();
  expect(redirectUri).toMatch(new RegExp(`^${BASE}/api/auth/sso/callback/org-`));
  idp.registerClient({ clientId: "quiver-e2e", clientSecret: "e2e-client-secret", redirectUris: [redirectUri] });
  await admin.close();

  // Someone with no cookie at all: the sign-in page, then the identity provider's own pages.
  const fresh = await browser.newContext({ baseURL: BASE });
  const tab = await fresh.newPage();
  await tab.goto("/signin");
  await tab.getByTestId("sso-who").fill(owner.email);
  await tab.getByTestId("sso-start").click();
  await tab.waitForURL(`${idp.issuer}/interaction/**`);
  await tab.getByLabel("Login").fill("olga");
  await tab.getByLabel("Password").fill("idp-password");
  await tab.getByRole("button", { name: "Sign in" }).click();
  await expect(tab.getByText("quiver-e2e asks for")).toBeVisible();
  await tab.getByRole("button", { name: "Allow" }).click();

  // Back in Quiver, signed in: the IDE's home, and the session says who.
  await tab.waitForURL(`${BASE}/`);
  const session = await (await tab.request.get(`${BASE}/api/auth/get-session`)).json();
  expect(session.user.email).toBe(owner.email);
  await expect(tab.getByTestId("sso-sign-in")).toHaveCount(0);

  // The password account now has the provider's identity linked to it.
  const db = new Database(join(process.env.E2E_ACCOUNTS_DATA_DIR!, "quiver.db"), {
    readonly: true,
    fileMustExist: true,
  });
  try {
    const linked = db
      .prepare(
        `SELECT a.providerId, a.accountId FROM AuthAccount a JOIN User u ON u.id = a.userId WHERE u.email = ? ORDER BY a.providerId`,
      )
      .all(owner.email) as { providerId: string; accountId: string }[];
    expect(linked.map((l) => l.providerId)).toEqual(["credential", expect.stringMatching(/^org-/)]);
    expect(linked.find((l) => l.providerId !== "credential")?.accountId).toBe("olga");
  } finally {
    db.close();
  }
  await fresh.close();
});

test("an email the identity provider has not verified is refused with Quiver's message", async ({ browser }) => {
  idp.addUser({ login: "uma", password: "idp-password", email: `uma@${domain}`, emailVerified: false, name: "Uma" });
  const context = await browser.newContext({ baseURL: BASE });
  const tab = await context.newPage();
  await tab.goto("/signin");
  await tab.getByTestId("sso-who").fill(`uma@${domain}`);
  await tab.getByTestId("sso-start").click();
  await tab.waitForURL(`${idp.issuer}/interaction/**`);
  await tab.getByLabel("Login").fill("uma");
  await tab.getByLabel("Password").fill("idp-password");
  await tab.getByRole("button", { name: "Sign in" }).click();
  await tab.getByRole("button", { name: "Allow" }).click();
  await tab.waitForURL(/\/signin\?sso=failed/);
  await expect(tab.getByTestId("sso-error")).toContainText("did not confirm that your email address is verified");
  await context.close();
});

test("a verified domain whose DNS record went missing says when it stops admitting people; back, Verify clears it", async ({
  browser,
}) => {
  const context = await browser.newContext({ baseURL: BASE });
  const page = await context.newPage();
  const signIn = await page.request.post(`${BASE}/api/auth/sign-in/email`, {
    headers: { origin: BASE, "content-type": "application/json" },
    data: { email: owner.email, password: owner.password },
  });
  expect(signIn.ok(), await signIn.text()).toBe(true);
  // The daily look found the record gone two days ago, as server/services/sso-domain-recheck.ts records it.
  const since = new Date(Date.now() - 2 * 86_400_000);
  const db = new Database(join(process.env.E2E_ACCOUNTS_DATA_DIR!, "quiver.db"), { fileMustExist: true });
  try {
    const changed = db
      .prepare(`UPDATE SsoVerifiedDomain SET missingSince = ? WHERE domain = ?`)
      .run(since.toISOString().replace("Z", "+00:00"), domain);
    expect(changed.changes).toBe(1);
  } finally {
    db.close();
  }
  const name = `_quiver-verification.${domain}`;
  const value = dns.records.get(name);
  dns.records.delete(name);

  await page.goto("/settings/sign-in");
  const listed = page.locator(`[data-testid="sso-domain"][data-domain="${domain}"]`);
  const releaseDay = new Date(since.getTime() + 7 * 86_400_000);
  const shown = (d: Date) =>
    page.evaluate((ms) => new Date(ms).toLocaleDateString(undefined, { dateStyle: "medium" }), +d);
  await expect(listed.getByTestId("sso-record-missing")).toContainText(
    `missing since ${await shown(since)}: it stops admitting people on ${await shown(releaseDay)}`,
  );
  await expect(listed.getByTestId("sso-record-name")).toHaveText(name);
  // Still missing: Verify says so and that it stays verified until then.
  await listed.getByTestId("sso-verify").click();
  await expect(listed.getByTestId("sso-verify-result")).toContainText("stays verified until a week after");
  // The record back: Verify finds it and the warning goes.
  dns.records.set(name, value!);
  await listed.getByTestId("sso-verify").click();
  await expect(listed.getByTestId("sso-record-missing")).toHaveCount(0);
  await expect(listed).toHaveAttribute("data-verified", "true");
  await context.close();
});
