// The /terminal WebSocket between the IDE's xterm and the server's bridge to a runner PTY: one
// union per direction. The upgrade URL carries `session`, a client-chosen `term` id (the same id
// after a reconnect re-attaches to the same PTY), `cols`/`rows`, and `offset`, the number of
// output characters the client already shows, so the server replays only what it missed.
import { z } from "zod";

export const TERMINAL_PATH = "/terminal";

const size = z.number().int().min(1).max(10_000);

export const TerminalClientMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("input"), data: z.string().max(1024 * 1024) }),
  z.object({ type: z.literal("resize"), cols: size, rows: size }),
  /** The person closed the terminal: end the PTY now instead of after the grace period. */
  z.object({ type: z.literal("close") }),
]);
export type TerminalClientMessage = z.infer<typeof TerminalClientMessage>;

export const TerminalServerMessage = z.discriminatedUnion("type", [
  /** `offset` is where the following data starts; `reset` means the client must clear first. */
  z.object({ type: z.literal("attached"), ptyId: z.string(), offset: z.number().int().nonnegative(), reset: z.boolean() }),
  z.object({ type: z.literal("data"), data: z.string() }),
  z.object({ type: z.literal("exit"), exitCode: z.number().int().nullable(), signal: z.string().optional() }),
  z.object({ type: z.literal("error"), message: z.string() }),
]);
export type TerminalServerMessage = z.infer<typeof TerminalServerMessage>;

export const TerminalQuery = z.object({
  session: z.string().min(1).max(200),
  term: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  cols: z.coerce.number().int().min(1).max(10_000).default(80),
  rows: z.coerce.number().int().min(1).max(10_000).default(24),
  offset: z.coerce.number().int().nonnegative().default(0),
});
