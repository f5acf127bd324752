// Who may call the sessions router (format: server/auth/authorize-table.ts). Sessions are
// their creator's; the org's admins and owners may read any of them, viewers read their own.
import { defineAccess, SESSION_READ, SESSION_READ_MEMBERS, SESSION_WRITE, SIGNED_IN } from "../../auth/authorize-table";
import { sessionsRouter } from "./sessions";

export default defineAccess(sessionsRouter, {
  list: { expect: SIGNED_IN, note: "signed-in person: their own sessions in their active org" },
  create: {
    expect: SIGNED_IN,
    input: () => ({ title: "made by the access table" }),
    note: "signed-in person, in their active org",
  },
  rename: {
    expect: SESSION_WRITE,
    input: (fx) => ({ id: fx.sessionId, title: "renamed" }),
    note: "the session's creator",
  },
  remove: {
    expect: SESSION_WRITE,
    input: async (fx) => ({ id: await fx.newSession() }),
    note: "the session's creator",
  },
  setModel: {
    expect: SESSION_WRITE,
    input: (fx) => ({ id: fx.sessionId, provider: null, model: null }),
    note: "the session's creator",
  },
  models: { expect: SIGNED_IN, note: "signed-in person" },
  modelList: { expect: SIGNED_IN, input: () => ({ provider: "anthropic" }), note: "signed-in person" },
  cost: {
    expect: SESSION_READ,
    input: (fx) => ({ id: fx.sessionId }),
    note: "creator, org admins/owners (read-only), its viewers",
  },
  mode: {
    expect: SESSION_READ_MEMBERS,
    input: (fx) => ({ sessionId: fx.sessionId }),
    note: "creator, org admins/owners (read-only)",
  },
  setMode: {
    expect: SESSION_WRITE,
    input: (fx) => ({ sessionId: fx.sessionId, mode: "ask" }),
    note: "the session's creator",
  },
  acceptPlan: {
    expect: SESSION_WRITE,
    input: (fx) => ({ sessionId: fx.sessionId, approvalId: "no-such-card", mode: "ask" }),
    note: "the session's creator",
  },
  get: {
    expect: SESSION_READ,
    input: (fx) => ({ id: fx.sessionId }),
    note: "creator, org admins/owners (read-only), its viewers",
  },
});
