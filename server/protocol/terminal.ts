// The /terminal WebSocket between the IDE's xterm and the server's bridge to a runner PTY: one
// union per direction. Terminals belong to the session, not to a page: any page of the session
// attaches to them, several at once, and they keep running with no page attached up to the
// idle limit. Two kinds of socket share the path:
// - a terminal socket: `session`, a client-chosen `term` id (the same id attaches to the same
//   PTY from any page), `cols`/`rows` (left out by a page that cannot measure its view yet, a
//   hidden tab: it attaches without resizing the shell), and `offset`, the number of output characters the client
//   already shows, so the server replays only what it missed; `restart=1` opens a new shell
//   under an id whose shell has ended (without it, an ended id is told how it ended);
// - a list socket (`session` and `list=1`, no `term`): the session's terminals, sent on connect
//   and whenever one opens or ends, so every page shows the same tabs.
import { z } from "zod";

export const TERMINAL_PATH = "/terminal";

/**
 * Close code of a terminal socket dropped for not reading its output: a passive viewer more than
 * a bound behind, or any page that read nothing for a while with output waiting. The page
 * reconnects with its `offset` and is replayed what the scrollback still holds.
 */
export const TERMINAL_BEHIND_CLOSE = 4008;

const size = z.number().int().min(1).max(10_000);

export const TerminalClientMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("input"), data: z.string().max(1024 * 1024) }),
  z.object({ type: z.literal("resize"), cols: size, rows: size }),
  /**
   * The person closed the terminal: end the PTY now (for every page). On a list socket it names
   * the terminal: its own socket is not read while its input waits for a program that does not
   * read (flow control), and closing must still work then.
   */
  z.object({
    type: z.literal("close"),
    term: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/)
      .optional(),
  }),
  /**
   * On a list socket: an interrupt key (^C, ^\, ^Z) typed in `term`, also sent on its socket
   * `socket` (attached's) as input frame `after + 1`, alone. Said here too because that socket
   * may be paused behind input the program does not read: in ISIG mode the key skips that input,
   * which is dropped with the key's own frame (the tty's flush on an interrupt); else nothing
   * changes and the frame is typed in order. A server that does not know it ignores it.
   */
  z.object({
    type: z.literal("interrupt"),
    term: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
    socket: z.string().max(64),
    key: z.enum(["\u0003", "\u001c", "\u001a"]),
    after: z.number().int().nonnegative(),
  }),
  /** On a list socket: drop an ended terminal's tab (for every page of the session). */
  z.object({ type: z.literal("forget"), term: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) }),
]);
export type TerminalClientMessage = z.infer<typeof TerminalClientMessage>;

/** Why a terminal is no longer running. */
export const TerminalEnd = z.discriminatedUnion("kind", [
  /** The shell exited by itself (`exit`, a crash, a signal). */
  z.object({ kind: z.literal("exited"), exitCode: z.number().int().nullable(), signal: z.string().optional() }),
  /** No page was attached for the idle limit. */
  z.object({ kind: z.literal("idle"), minutes: z.number().nonnegative() }),
  /** The runner holding the PTY disconnected (or had none to open it on). */
  z.object({ kind: z.literal("runner"), message: z.string() }),
  /** A person closed it (× on its tab). */
  z.object({ kind: z.literal("closed") }),
  /** The runner was at its terminal limit: this one, unseen longest, made room for a new one. */
  z.object({ kind: z.literal("reclaimed"), minutes: z.number().nonnegative() }),
]);
export type TerminalEnd = z.infer<typeof TerminalEnd>;

export const TerminalInfo = z.object({
  term: z.string(),
  /** ms since the epoch: tabs are ordered by it. */
  createdAt: z.number(),
  /** Absent while it runs. */
  ended: TerminalEnd.optional(),
  endedAt: z.number().optional(),
});
export type TerminalInfo = z.infer<typeof TerminalInfo>;

export const TerminalServerMessage = z.discriminatedUnion("type", [
  /** `offset` is where the following data starts; `reset` means the client must clear first. */
  z.object({
    type: z.literal("attached"),
    ptyId: z.string(),
    offset: z.number().int().nonnegative(),
    reset: z.boolean(),
    /** This socket's id, for `interrupt` on the list socket (absent: an older server, no such message). */
    socket: z.string().optional(),
  }),
  z.object({ type: z.literal("data"), data: z.string() }),
  /** The terminal ended (now, or before this socket asked for it); the socket closes after. */
  z.object({ type: z.literal("ended"), reason: TerminalEnd }),
  z.object({ type: z.literal("error"), message: z.string() }),
  /** On a list socket: the session's terminals, oldest first, and the idle limit in minutes. */
  z.object({ type: z.literal("terminals"), terminals: z.array(TerminalInfo), idleMinutes: z.number().nonnegative() }),
]);
export type TerminalServerMessage = z.infer<typeof TerminalServerMessage>;

const flag = z
  .enum(["0", "1"])
  .default("0")
  .transform((v) => v === "1");

export const TerminalQuery = z.union([
  z.object({
    session: z.string().min(1).max(200),
    term: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
    cols: z.coerce.number().int().min(1).max(10_000).optional(),
    rows: z.coerce.number().int().min(1).max(10_000).optional(),
    offset: z.coerce.number().int().nonnegative().default(0),
    restart: flag,
  }),
  z.object({ session: z.string().min(1).max(200), list: z.literal("1") }),
]);
export type TerminalQuery = z.infer<typeof TerminalQuery>;

/** How a terminal ended, in words for the person. */
export function describeEnd(end: TerminalEnd): string {
  switch (end.kind) {
    case "exited":
      return end.exitCode !== null
        ? `exited with code ${end.exitCode}`
        : `exited${end.signal ? ` (${end.signal})` : ""}`;
    case "idle":
      return `ended after ${end.minutes} min with no page open (the idle limit)`;
    case "runner":
      return `ended: the runner was lost (${end.message})`;
    case "closed":
      return "closed";
    case "reclaimed":
      return `closed after ${end.minutes} min with no page open, to make room for a new terminal (the runner's limit)`;
  }
}
