// Who may call the git router (format: server/auth/authorize-table.ts). Credentials are each
// signed-in person's own (no resource id: a person reaches only their own rows). Fetch, pull,
// push and clone act in a session's workspace with the caller's credential: its creator only;
// the offline status also to the org's admins (read-only). Viewers never.
import { defineAccess, SESSION_READ_MEMBERS, SESSION_WRITE, SIGNED_IN } from "../../auth/authorize-table";
import { gitRouter } from "./git";

const OWN = { expect: SIGNED_IN, note: "any signed-in person, their own credentials only" };
const WRITE = { expect: SESSION_WRITE, note: "the session's creator, with their own credential" };

export default defineAccess(gitRouter, {
  credentials: OWN,
  saveCredential: { ...OWN, input: () => ({ host: "git.example.com", username: "u", token: "t0ken-for-the-table" }) },
  removeCredential: { ...OWN, input: (fx) => ({ credentialId: `none-${fx.unique()}` }) },
  status: { expect: SESSION_READ_MEMBERS, note: "creator, org admins/owners (offline: remote, branch, ahead/behind)" },
  fetch: WRITE,
  pull: WRITE,
  push: WRITE,
  clone: { ...WRITE, input: (fx) => ({ sessionId: fx.sessionId, url: "https://git.example.com/x.git" }) },
});
