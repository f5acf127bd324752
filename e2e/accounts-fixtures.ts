// Fixtures for browser tests against the second server, the one with accounts on (port 3219,
// QUIVER_AUTH=accounts, QUIVER_SIGNUP=open, a data folder of its own: e2e/playwright.config.ts).
// `test` here is e2e/fixtures.ts's (fake model provider, off-host guard) with baseURL on that
// server; `people` makes people (each test its own, so specs never share accounts), signs them in
// and out through the real endpoints, in this page's browser context or in a second one.
import type { APIRequestContext, Browser, BrowserContext, Page } from "@playwright/test";
import { test as base, expect } from "./fixtures";

export const ACCOUNTS_URL = `http://127.0.0.1:${process.env.E2E_ACCOUNTS_PORT ?? 3219}`;

export interface Person {
  name: string;
  email: string;
  password: string;
}

/** The server's first owner (made once per server by `ensureFirstOwner`; open sign-up needs one). */
export const FIRST_OWNER: Person = {
  name: "First Owner",
  email: "first-owner@example.test",
  password: "first-owner-password",
};

let counter = 0;
/** A person no other test uses (the email is unique per run). */
export function newPerson(label = "person"): Person {
  const id = `${Date.now().toString(36)}${(counter++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  return {
    name: `${label[0].toUpperCase()}${label.slice(1)} ${id}`,
    email: `${label}-${id}@example.test`,
    password: `pw-${id}-long-enough`,
  };
}

const origin = { origin: ACCOUNTS_URL };

/** Makes the first owner if the server has none yet (from loopback, as the setup page does). */
export async function ensureFirstOwner(request: APIRequestContext): Promise<void> {
  const mode = await (await request.get(`${ACCOUNTS_URL}/api/auth/mode`)).json();
  if (!mode.firstOwner) return;
  const res = await request.post(`${ACCOUNTS_URL}/api/auth/first-owner`, { data: FIRST_OWNER, headers: origin });
  // 409: another worker made it meanwhile.
  if (!res.ok() && res.status() !== 409) throw new Error(`first owner not made: ${res.status()} ${await res.text()}`);
}

/** Signs `person` up through better-auth's endpoint; the context is then signed in as them. */
export async function signUpApi(page: Page, person: Person): Promise<void> {
  await ensureFirstOwner(page.request);
  const res = await page.request.post(`${ACCOUNTS_URL}/api/auth/sign-up/email`, { data: person, headers: origin });
  expect(res.ok(), `sign-up of ${person.email}: ${res.status()} ${await res.text()}`).toBe(true);
}

/** Signs in through the endpoint (the context then holds the session cookie). */
export async function signInApi(page: Page, person: Person): Promise<void> {
  const res = await page.request.post(`${ACCOUNTS_URL}/api/auth/sign-in/email`, {
    data: { email: person.email, password: person.password },
    headers: origin,
  });
  expect(res.ok(), `sign-in of ${person.email}: ${res.status()} ${await res.text()}`).toBe(true);
}

/** Signs up through the /signup page (open sign-up, or `invitation` for an invited person). */
export async function signUpPage(page: Page, person: Person, options: { invitation?: string } = {}): Promise<void> {
  await ensureFirstOwner(page.request);
  await page.goto(options.invitation ? `/signup?invitation=${encodeURIComponent(options.invitation)}` : "/signup");
  await page.getByLabel("Name").fill(person.name);
  if (!options.invitation) await page.getByLabel("Email", { exact: true }).fill(person.email);
  await page.getByLabel("Password", { exact: true }).fill(person.password);
  await page.getByLabel("Password again").fill(person.password);
  await page.getByRole("button", { name: /create account/i }).click();
  await expect(page).not.toHaveURL(/\/signup/);
}

/** Signs in through the /signin page; `next` is where it should land (default the home page). */
export async function signInPage(page: Page, person: Person, next?: string): Promise<void> {
  await page.goto(next ? `/signin?next=${encodeURIComponent(next)}` : "/signin");
  await page.getByLabel("Email", { exact: true }).fill(person.email);
  await page.getByLabel("Password", { exact: true }).fill(person.password);
  await page.getByRole("button", { name: /^sign in$/i }).click();
  await expect(page).not.toHaveURL(/\/signin/);
}

export async function signOutApi(page: Page): Promise<void> {
  const res = await page.request.post(`${ACCOUNTS_URL}/api/auth/sign-out`, { data: {}, headers: origin });
  expect(res.ok()).toBe(true);
}

/** A fresh browser context (another person, another device) on the accounts server. */
export async function newContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ baseURL: ACCOUNTS_URL });
}

export const test = base.extend<{ people: { signUp(page: Page, label?: string): Promise<Person> }; secondPage: Page }>({
  baseURL: async ({}, use) => use(ACCOUNTS_URL),
  /** `people.signUp(page)`: a new person, signed up and signed in in that page's context. */
  people: async ({}, use) => {
    await use({
      async signUp(page, label) {
        const person = newPerson(label);
        await signUpApi(page, person);
        return person;
      },
    });
  },
  /** A page in a second browser context (another person or device), closed after the test. */
  secondPage: async ({ browser }, use) => {
    const context = await newContext(browser);
    await use(await context.newPage());
    await context.close();
  },
});

export { expect };
