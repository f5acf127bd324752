// Who may call the sso router (format: server/auth/authorize-table.ts): an org's single sign-on
// settings are read and changed by its owners and admins only. (otherOrg acts on its own org.)
import { defineAccess, ORG_ADMINS } from "../../auth/authorize-table";
import { ssoRouter } from "./sso";

export default defineAccess(ssoRouter, {
  get: { expect: ORG_ADMINS, note: "org owners and admins" },
  // Empty domains are refused before any network: the cell shows authorization alone.
  save: {
    expect: ORG_ADMINS,
    input: () => ({ issuer: "https://idp.invalid", clientId: "c", clientSecret: "s", domains: "" }),
    note: "org owners and admins",
  },
  test: { expect: ORG_ADMINS, input: () => ({ issuer: "not a url" }), note: "org owners and admins" },
  remove: { expect: ORG_ADMINS, input: () => undefined, note: "org owners and admins" },
});
