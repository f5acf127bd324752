// The /runner WebSocket channel between the server and a runner process: one discriminated
// union per direction. The token is not a message: it travels in the upgrade request
// (`Authorization: Bearer <token>`) and is checked before the WebSocket exists.
import { z } from "zod";
import { PreviewRunnerFrame, PreviewServerFrame } from "./preview";
import { WorkspaceEntry, WorkspaceId } from "./workspace-ops";

export { WorkspaceId } from "./workspace-ops";

/** Bumped on any incompatible change; the server refuses a hello with another version. */
export const RUNNER_PROTOCOL_VERSION = 1;

/** Header name and scheme the runner authenticates with on the upgrade request. */
export const RUNNER_AUTH_HEADER = "authorization";
export const runnerAuthHeaderValue = (token: string) => `Bearer ${token}`;

/**
 * Terminal input flow control: the server keeps at most this many bytes of a terminal's input
 * sent but not yet written to the PTY (pty.ack says how many were), and stops reading the
 * browser's socket while over it, so a paste into a program that does not read waits in TCP.
 */
export const PTY_INPUT_WINDOW = 1024 * 1024;
/** The server splits input into pty.input frames of at most this many characters. */
export const PTY_INPUT_FRAME_CHARS = 64 * 1024;

/**
 * Terminal output flow control: a runner told `outputWindow` on pty.open keeps at most that many
 * characters of a terminal's output sent in `counted` pty.data frames and not yet acknowledged
 * (pty.drained), and stops reading the PTY meanwhile, so a program writing faster than the
 * terminal's pages read blocks on its writes instead of filling memory on either side.
 */
export const PTY_OUTPUT_WINDOW = 1024 * 1024;
/** The server acknowledges output in batches of at least this many characters. */
export const PTY_OUTPUT_ACK_CHARS = 64 * 1024;

const id = z.string().min(1).max(200);
/** 32 random bytes, base64url: the server's challenge, fresh for each connection. */
const nonce = z.string().regex(/^[A-Za-z0-9_-]{43}$/, "a challenge is 32 bytes, base64url");
/** A runner's Ed25519 public key, raw 32 bytes base64url (runner/identity-key.ts). */
export const RunnerPublicKey = z.string().regex(/^[A-Za-z0-9_-]{43}$/, "a public key is 32 bytes, base64url");
/** An Ed25519 signature, 64 bytes base64url. */
const signature = z.string().regex(/^[A-Za-z0-9_-]{86}$/, "a signature is 64 bytes, base64url");
const ptyId = z.string().min(1).max(200);
const size = z.number().int().min(1).max(10_000);
/**
 * The workspace a frame acts in (a folder under a `--root` runner's root). Absent: the runner's
 * default workspace, its `--workspace` folder, as before runners served several.
 */
const workspaceId = WorkspaceId.optional();

export const ServerToRunner = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ping"), id }),
  z.object({
    type: z.literal("request"),
    id,
    sessionId: z.string().min(1),
    workspaceId,
    /** The operation: a tool name registered in runner/ops.ts (read_file, shell, fetch_url...). */
    op: z.string().min(1),
    input: z.unknown(),
    /** Absolute deadline, ms since epoch. */
    deadline: z.number(),
    /**
     * Send the op's whole output (a command's, up to this many bytes, then its tail) as `output`
     * frames before the result, for the server's spill; absent: the result's text is all there is.
     */
    outputCeiling: z.number().int().positive().optional(),
  }),
  z.object({ type: z.literal("cancel"), id }),
  /** After a hello with a publicKey from a runner of the shared token: sign runnerProofMessage of it. */
  z.object({ type: z.literal("challenge"), nonce }),
  /** The request's output up to `offset` is stored: the runner may send more (flow control). */
  z.object({ type: z.literal("output.ack"), id, offset: z.number().int().nonnegative() }),
  z.object({
    type: z.literal("pty.open"),
    ptyId,
    sessionId: z.string().min(1),
    workspaceId,
    cols: size,
    rows: size,
    /** Window output to this many characters (PTY_OUTPUT_WINDOW); absent: an older server, none. */
    outputWindow: z.number().int().positive().optional(),
  }),
  /** Typed input, UTF-8 bytes counted against PTY_INPUT_WINDOW until the runner's pty.ack. */
  z.object({ type: z.literal("pty.input"), ptyId, data: z.string().max(1024 * 1024) }),
  z.object({ type: z.literal("pty.resize"), ptyId, cols: size, rows: size }),
  z.object({ type: z.literal("pty.close"), ptyId }),
  /** `chars` more of the terminal's counted output are passed on; sent only to a runner that counts. */
  z.object({ type: z.literal("pty.drained"), ptyId, chars: z.number().int().positive() }),
  /**
   * An interrupt key typed after input that has not reached the runner yet (it waits in the page's
   * socket). The runner answers pty.interrupted: skipped, when the terminal turns it into its
   * signal (ISIG): queued input is dropped and the key delivered; else the key is not written
   * and the server sends it in order. Sent only to a runner that counts output (a new one).
   */
  z.object({ type: z.literal("pty.interrupt"), ptyId, key: z.enum(["\u0003", "\u001c", "\u001a"]) }),
  /**
   * Whether any page shows the terminal (one does when it opens). A runner at its terminal limit
   * closes the one no page has shown for longest to open another. Sent only to a runner whose
   * hello says ptyReclaim.
   */
  z.object({ type: z.literal("pty.watched"), ptyId, watched: z.boolean() }),
  ...PreviewServerFrame.options,
]);
export type ServerToRunner = z.infer<typeof ServerToRunner>;

/** Text a runner says about itself, shown to admins and written to the log: made one line of
 *  at most `max` characters (a probe's stderr may hold several lines; it is still said). */
const fact = (max: number) =>
  z
    .string()
    .transform((s) => s.replace(/[\u0000-\u001f\u007f]+/g, " ").slice(0, max))
    .pipe(z.string());

/** An id the server keys, logs and stores runners by: refused, not repaired, when it is not one line. */
const runnerId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\u0000-\u001f\u007f]+$/, "a runner id is one line");

export const RunnerSandbox = z.object({
  available: z.boolean(),
  kind: fact(100),
  /** Why commands run unsandboxed ("bubblewrap (bwrap) is not installed", "disabled by configuration"). */
  reason: fact(2_000).optional(),
  /**
   * What a command or terminal granted network reaches: "isolated", the workspace's own network
   * namespace with outbound access and no path to the host's loopback; "none", no outbound
   * access (networkReason says why, e.g. slirp4netns missing); "host", the host's network,
   * loopback and Quiver's own port included (unsandboxed, or QUIVER_SANDBOX_HOST_NETWORK=1).
   */
  network: z.enum(["isolated", "none", "host"]).optional(),
  networkReason: fact(2_000).optional(),
});
export type RunnerSandbox = z.infer<typeof RunnerSandbox>;

export const RunnerHello = z.object({
  type: z.literal("hello"),
  protocol: z.number().int(),
  /** Its `--id` (default: host name and a hash of its folder): one line, as ids are logged. */
  runnerId,
  /** Absolute path of the workspace root on the runner's machine. */
  workspace: fact(4_096),
  /** The runner's software version (package.json version). */
  version: fact(200),
  sandbox: RunnerSandbox,
  /** Workspace version counter at connect time (files.changed carries later values). */
  workspaceVersion: z.number().int().nonnegative(),
  /** Started with `--root DIR`: serves many workspaces by id (absent: one folder, as before). */
  root: z.boolean().optional(),
  /** `--label x` (repeatable): what placement may ask for ("gpu"). */
  labels: z
    .array(z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/i, "a label is 1-64 of letters, digits, '.', '_' and '-'"))
    .max(64)
    .optional(),
  /** The workspaces under the root at connect time, so a server finds them again after a restart. */
  workspaces: z.array(WorkspaceEntry).max(100_000).optional(),
  /** It answers pty.input with pty.ack (absent: an older runner; its input is not windowed). */
  ptyAck: z.literal(true).optional(),
  /** It takes pty.watched: full, it closes an unwatched terminal to open another (absent: it refuses). */
  ptyReclaim: z.literal(true).optional(),
  /** Free bytes on the root's file system. */
  freeDiskBytes: z.number().int().nonnegative().optional(),
  /** Most workspaces this runner takes (`--capacity N`). */
  capacity: z.number().int().positive().optional(),
  /** Its own key (absent: an older runner): the server binds the id to it on first use. */
  publicKey: RunnerPublicKey.optional(),
});
export type RunnerHello = z.infer<typeof RunnerHello>;

/** How deep a result's meta may nest: it is stored and sent on as JSON, whose writer recurses. */
export const META_DEPTH = 64;

/** True when `value` has no arrays or objects more than `depth` levels deep (walked without recursion). */
export function nestedAtMost(value: unknown, depth: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (d >= depth) return false;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return true;
}

/** The bytes a runner signs to answer a challenge: bound to this connection's nonce, its id and key. */
export const runnerProofMessage = (nonce: string, runnerId: string, publicKey: string) =>
  new TextEncoder().encode(`quiver-runner-proof-v1\n${nonce}\n${runnerId}\n${publicKey}`);

export const RunnerToServer = z.discriminatedUnion("type", [
  RunnerHello,
  /** The answer to `challenge`: runnerProofMessage signed with the hello's key. */
  z.object({ type: z.literal("proof"), signature }),
  z.object({ type: z.literal("pong"), id }),
  z.object({ type: z.literal("progress"), id, chunk: z.string() }),
  /** Raw output bytes of a request that asked for them (outputCeiling), base64, in order; `offset` counts from the call's first byte. */
  z.object({ type: z.literal("output"), id, offset: z.number().int().nonnegative(), data: z.string() }),
  z.object({
    type: z.literal("result"),
    id,
    ok: z.boolean(),
    output: z.string(),
    meta: z
      .record(z.string(), z.unknown())
      .refine((m) => nestedAtMost(m, META_DEPTH), `meta nests deeper than ${META_DEPTH} levels`)
      .optional(),
  }),
  /** Paths are workspace-relative with forward slashes; `version` counts per workspace. */
  z.object({
    type: z.literal("files.changed"),
    workspaceId,
    paths: z.array(z.string()),
    version: z.number().int().nonnegative(),
  }),
  /** `counted`: the frame is within the output window (pty.open's outputWindow): acknowledge it. */
  z.object({ type: z.literal("pty.data"), ptyId, data: z.string(), counted: z.literal(true).optional() }),
  /** `bytes` more of the PTY's input (UTF-8) are written to it, or dropped (the PTY ended, or over the runner's cap). */
  z.object({ type: z.literal("pty.ack"), ptyId, bytes: z.number().int().positive() }),
  /** The answer to pty.interrupt, in order. */
  z.object({ type: z.literal("pty.interrupted"), ptyId, skipped: z.boolean() }),
  z.object({
    type: z.literal("pty.exit"),
    ptyId,
    exitCode: z.number().int().nullable(),
    signal: z.string().optional(),
    /** It was closed to make room for another terminal, after this long with no page showing it. */
    reclaimedAfterMs: z.number().int().nonnegative().optional(),
  }),
  ...PreviewRunnerFrame.options,
]);
export type RunnerToServer = z.infer<typeof RunnerToServer>;

/** Parses one frame; returns an error string instead of throwing so a peer's bad frame is logged, not fatal. */
export function decodeFrame<T>(
  schema: z.ZodType<T>,
  raw: unknown,
): { ok: true; message: T } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(frameText(raw));
  } catch {
    return { ok: false, error: "frame is not JSON" };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) return { ok: false, error: `bad frame: ${parsed.error.issues[0]?.message ?? "invalid"}` };
  return { ok: true, message: parsed.data };
}

function frameText(raw: unknown): string {
  if (typeof raw === "string") return raw;
  if (raw instanceof Uint8Array || raw instanceof ArrayBuffer) return new TextDecoder().decode(raw);
  if (Array.isArray(raw)) return raw.map(frameText).join("");
  return String(raw);
}
