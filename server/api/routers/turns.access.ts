// Who may call the turns router (format: server/auth/authorize-table.ts): the session's creator
// talks to its agent; its history and live events are read like the session.
import { defineAccess, SESSION_READ, SESSION_WRITE } from "../../auth/authorize-table";
import { turnsRouter } from "./turns";

export default defineAccess(turnsRouter, {
  send: {
    expect: SESSION_WRITE,
    input: (fx) => ({ sessionId: fx.sessionId, text: "" }),
    note: "the session's creator",
  },
  // Cancelling also cancels the session's cards: a session of its own.
  cancel: {
    expect: SESSION_WRITE,
    input: async (fx) => ({ sessionId: await fx.newSession() }),
    note: "the session's creator",
  },
  rewind: {
    expect: SESSION_WRITE,
    input: (fx) => ({ sessionId: fx.sessionId, turnId: "t0", conversation: true, files: false, dryRun: true }),
    note: "the session's creator",
  },
  unrewind: {
    expect: SESSION_WRITE,
    input: (fx) => ({ sessionId: fx.sessionId, rewindId: "r0" }),
    note: "the session's creator",
  },
  window: { expect: SESSION_READ, note: "creator, org admins/owners, its viewers (redacted)" },
  earlier: { expect: SESSION_READ, note: "creator, org admins/owners, its viewers (redacted)" },
  events: { expect: SESSION_READ, note: "creator, org admins/owners, its viewers (redacted)" },
});
