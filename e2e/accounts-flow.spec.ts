// A person's account in the browser, on the accounts server: the first owner made from the
// setup page (when this server has none yet), then a person signs out and in, changes their
// password, sees the devices signed in as them and signs another one out.
import { ACCOUNTS_URL, expect, newPerson, signInPage, signUpApi, test } from "./accounts-fixtures";

test("the first owner is made from the sign-up page", async ({ page }) => {
  const mode = await (await page.request.get(`${ACCOUNTS_URL}/api/auth/mode`)).json();
  test.skip(!mode.firstOwner, "another spec already made this server's first owner");
  await page.goto("/");
  await expect(page).toHaveURL(/\/signin/);
  await page.goto("/signup");
  await expect(page.getByRole("heading", { name: "Create the first owner" })).toBeVisible();
  const owner = newPerson("owner");
  await page.getByLabel("Name").fill(owner.name);
  await page.getByLabel("Email", { exact: true }).fill(owner.email);
  await page.getByLabel("Password", { exact: true }).fill(owner.password);
  await page.getByLabel("Password again").fill(owner.password);
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page).toHaveURL(`${ACCOUNTS_URL}/`);
});

test("sign out, sign in, change the password, sign another device out", async ({ page, secondPage }) => {
  const person = newPerson("ada");
  await signUpApi(page, person);
  await page.goto("/settings/account");
  await expect(page.getByTestId("account-email")).toContainText(person.email);
  // Sign out from the devices list (this device), then back in through the page.
  await page
    .getByTestId("device")
    .filter({ has: page.getByText("(this device)") })
    .getByTestId("device-revoke")
    .click();
  await expect(page).toHaveURL(/\/signin/);
  await page.goto("/settings/account");
  await expect(page).toHaveURL(/\/signin\?next=/);
  await page.getByLabel("Email", { exact: true }).fill(person.email);
  await page.getByLabel("Password", { exact: true }).fill("not the password");
  await page.getByRole("button", { name: /^sign in$/i }).click();
  await expect(page.getByTestId("signin-error")).toBeVisible();
  await page.getByLabel("Password", { exact: true }).fill(person.password);
  await page.getByRole("button", { name: /^sign in$/i }).click();
  await expect(page).toHaveURL(/\/settings\/account$/);

  // A second device signed in as the same person shows up, and is signed out from here.
  await signInPage(secondPage, person, "/settings/account");
  await page.reload();
  await expect(page.getByTestId("device")).toHaveCount(2);
  await page
    .getByTestId("device")
    .filter({ hasNot: page.getByText("(this device)") })
    .getByTestId("device-revoke")
    .click();
  await expect(page.getByTestId("device-note")).toContainText("signed out");
  await expect(page.getByTestId("device")).toHaveCount(1);
  await secondPage.reload();
  await expect(secondPage).toHaveURL(/\/signin/);

  // Password change: the old one stops working, the new one works.
  await page.getByLabel("Current password").fill(person.password);
  await page.getByLabel("New password", { exact: true }).fill("the new password here");
  await page.getByLabel("New password again").fill("the new password here");
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page.getByTestId("password-note")).toHaveText("Password changed.");
  const old = await secondPage.request.post(`${ACCOUNTS_URL}/api/auth/sign-in/email`, {
    data: { email: person.email, password: person.password },
    headers: { origin: ACCOUNTS_URL },
  });
  expect(old.status()).toBe(401);
  await signInPage(secondPage, { ...person, password: "the new password here" });
});
