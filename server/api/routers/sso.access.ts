// Who may call the sso router (format: server/auth/authorize-table.ts): an org's single sign-on
// settings are read and tested by its owners and admins, and changed by its owners only (the
// service refuses admins: whoever sets the IdP can sign in as the members). (otherOrg acts on its
// own org, where it is an owner.)
import { defineAccess, ORG_ADMINS } from "../../auth/authorize-table";
import { ssoRouter } from "./sso";

export default defineAccess(ssoRouter, {
  get: { expect: ORG_ADMINS, note: "org owners and admins" },
  // Empty domains are refused before any network: the cell shows authorization alone.
  save: {
    expect: { ...ORG_ADMINS, admin: "FORBIDDEN" },
    input: () => ({ issuer: "https://idp.invalid", clientId: "c", clientSecret: "s", domains: "" }),
    note: "org owners",
  },
  test: { expect: ORG_ADMINS, input: () => ({ issuer: "not a url" }), note: "org owners and admins" },
  remove: { expect: { ...ORG_ADMINS, admin: "FORBIDDEN" }, input: () => undefined, note: "org owners" },
  // A domain never saved is refused before any DNS lookup: the cell shows authorization alone.
  verifyDomain: {
    expect: { ...ORG_ADMINS, admin: "FORBIDDEN" },
    input: () => ({ domain: "never-saved.invalid" }),
    note: "org owners",
  },
});
