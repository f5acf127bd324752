// A session's mode on the wire (sessions.setMode, the `session.mode` event, each tool call's
// events); what each mode lets through is server/policy/modes.ts.
import { z } from "zod";

export const MODES = ["plan", "ask", "accept-edits", "auto"] as const;
export const SessionMode = z.enum(MODES);
export type SessionMode = z.infer<typeof SessionMode>;
