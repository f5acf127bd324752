// Inputs and result facts of the runner's `shell` and `fetch_url` operations. The server's tool
// files and the runner's ops both import these, so the model-facing schema and what the runner
// accepts can never drift apart.
import { z } from "zod";

export const SHELL_LIMITS = {
  defaultTimeoutMs: 120_000,
  maxTimeoutMs: 600_000,
  /** A poll (`session_id` without `kill`) waits this long for more output unless told otherwise. */
  defaultPollYieldMs: 10_000,
  defaultMaxOutputBytes: 200_000,
  maxOutputBytes: 1_000_000,
  maxCommandChars: 100_000,
} as const;

export const SHELL_HANDLE = /^sh_[a-z0-9]{6,32}$/;

/** `shell_end_session`: the server's, when a session is deleted (never a tool): stops the commands
 *  the session left running and forgets their output. The session is the request's own. */
export const SHELL_END_SESSION = "shell_end_session";
export const ShellEndSessionInput = z.object({});

export const ShellInput = z
  .object({
    command: z
      .string()
      .min(1)
      .max(SHELL_LIMITS.maxCommandChars)
      .optional()
      .describe(
        "The command line, run by bash in the workspace with the login profile's environment. Omit when polling with session_id.",
      ),
    cwd: z
      .string()
      .max(4096)
      .optional()
      .describe("Working directory relative to the workspace root (default: the root)."),
    timeout_ms: z
      .number()
      .int()
      .min(1)
      .max(SHELL_LIMITS.maxTimeoutMs)
      .optional()
      .describe("Kill the command (and everything it started) after this long. Default 120000, max 600000."),
    yield_time_ms: z
      .number()
      .int()
      .min(0)
      .max(SHELL_LIMITS.maxTimeoutMs)
      .optional()
      .describe(
        "Return what the command printed so far after this long and leave it running; the result gives a session_id to read more.",
      ),
    session_id: z
      .string()
      .regex(SHELL_HANDLE, "must be a handle like sh_ab12cd returned by an earlier shell call")
      .optional()
      .describe(
        "Handle of a command still running from an earlier call: returns its new output, and its exit once done.",
      ),
    kill: z.boolean().optional().describe("With session_id: stop that command and return its remaining output."),
    max_output_bytes: z
      .number()
      .int()
      .min(1_000)
      .max(SHELL_LIMITS.maxOutputBytes)
      .optional()
      .describe("Cap on output bytes returned by this call (head and tail kept). Default 200000."),
    network: z
      .boolean()
      .optional()
      .describe("Request network access for this command (it has none by default); always asks the user."),
  })
  .superRefine((v, ctx) => {
    if (v.command === undefined && v.session_id === undefined) {
      ctx.addIssue({ code: "custom", path: ["command"], message: "give a command to run, or a session_id to poll" });
    }
    if (v.command !== undefined && v.session_id !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["session_id"],
        message: "give either command (start) or session_id (poll), not both",
      });
    }
    if (v.kill && v.session_id === undefined) {
      ctx.addIssue({ code: "custom", path: ["kill"], message: "kill needs the session_id of a running command" });
    }
  });
export type ShellInput = z.infer<typeof ShellInput>;

/** Why a command stopped when it did not simply exit. */
export const ShellStopReason = z.enum(["timeout", "cancelled", "killed"]);

/** `meta` of a shell result; the server formats the model's text from it. */
export const ShellResultMeta = z.object({
  /** Set while the command keeps running after this call returned (yield). */
  running: z.boolean(),
  sessionHandle: z.string().optional(),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  stopReason: ShellStopReason.nullable(),
  /** Bytes of output dropped from the middle of this call's output (cap). */
  omittedBytes: z.number().int().nonnegative(),
  /** Output bytes produced since the command started. */
  totalBytes: z.number().int().nonnegative(),
  durationMs: z.number().nonnegative(),
  /**
   * Set when this call's output was streamed whole to the server (output frames): the output
   * offsets [from, to) it covers, and the part of them not kept (past the ceiling, or the runner's
   * disk refused it), which the stored copy skips.
   */
  stored: z
    .object({
      from: z.number().int().nonnegative(),
      to: z.number().int().nonnegative(),
      dropped: z
        .object({ from: z.number().int().nonnegative(), to: z.number().int().nonnegative(), reason: z.string() })
        .optional(),
    })
    .optional(),
  sandboxed: z.boolean(),
  network: z.boolean(),
});
export type ShellResultMeta = z.infer<typeof ShellResultMeta>;

export const FETCH_LIMITS = {
  maxRedirects: 5,
  timeoutMs: 30_000,
  maxBodyBytes: 5 * 1024 * 1024,
  maxUrlChars: 8192,
} as const;

// Headers the model may not set: they would let a request claim another host or confuse framing.
export const FORBIDDEN_FETCH_HEADERS = [
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "keep-alive",
  "proxy-authorization",
  "proxy-connection",
  "expect",
];

const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, "must be a valid HTTP header name");

export const FetchUrlInput = z.object({
  url: z.string().min(1).max(FETCH_LIMITS.maxUrlChars).describe("An http:// or https:// URL to GET."),
  headers: z
    .record(
      headerName,
      z
        .string()
        .max(8192)
        .regex(/^[^\r\n\0]*$/, "must not contain line breaks"),
    )
    .refine((h) => !Object.keys(h).some((k) => FORBIDDEN_FETCH_HEADERS.includes(k.toLowerCase())), {
      message: `these headers are set by the fetcher and cannot be given: ${FORBIDDEN_FETCH_HEADERS.join(", ")}`,
    })
    .optional()
    .describe('Extra request headers, e.g. {"Accept": "application/json"}.'),
  raw: z.boolean().optional().describe("Return HTML as its source instead of readable text."),
});
export type FetchUrlInput = z.infer<typeof FetchUrlInput>;

export const FetchResultMeta = z.object({
  network: z.literal(true),
  url: z.string(),
  finalUrl: z.string(),
  status: z.number().int(),
  contentType: z.string(),
  bytes: z.number().int().nonnegative(),
  truncated: z.boolean(),
  redirects: z.array(z.string()),
  /** A redirect to another host, reported instead of followed (the policy judges each host). */
  notFollowed: z.string().optional(),
});
export type FetchResultMeta = z.infer<typeof FetchResultMeta>;
