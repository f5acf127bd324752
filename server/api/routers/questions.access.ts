// Who may call the questions router (format: server/auth/authorize-table.ts): ask_user's card
// is answered by the session's creator only, as an approval card is.
import { defineAccess, SESSION_WRITE } from "../../auth/authorize-table";
import { questionsRouter } from "./questions";

export default defineAccess(questionsRouter, {
  answer: {
    expect: SESSION_WRITE,
    input: (fx) => ({ sessionId: fx.sessionId, callId: "call0", answer: { option: 0 } }),
    note: "the session's creator only",
  },
});
