// The runner op that reaches a git server for a workspace (`ide_git_remote`: clone, fetch, pull,
// push, and the offline status), and the checks every remote URL and branch name passes on both
// sides. A credential travels only inside this op's input, server to runner, for one network
// operation: the runner hands it to git over a pipe and never stores, prints or returns it.
import { z } from "zod";
import { GitScope } from "./git-scope";

/** Hosts that may be reached over plain http (the machine itself, for tests and local forges). */
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export interface RemoteUrl {
  /** The URL as git is given it. */
  url: string;
  /** `host` or `host:port`, lower case: what a stored credential is bound to. */
  host: string;
  protocol: "https" | "http";
}

/**
 * A remote URL Quiver will reach with a credential: https (http only to loopback), no user or
 * password in it, no query or fragment, nothing git could read as an option or a transport
 * (`ext::`, `file://`, `--upload-pack=`, `user@host:path`). Returns the reason when refused.
 */
export function parseRemoteUrl(raw: string): RemoteUrl | { error: string } {
  const text = raw.trim();
  if (!text) return { error: "Give the repository's URL (https://host/owner/repo.git)." };
  if (text.length > 2000) return { error: "That URL is too long." };
  if (/[\s\x00-\x1f\x7f]/.test(text)) return { error: "A repository URL has no spaces or control characters." };
  if (text.startsWith("-")) return { error: "A repository URL cannot start with '-'." };
  if (!/^https?:\/\//i.test(text))
    return { error: "Only https:// repository URLs are supported (not ssh, git://, file:// or ext::)." };
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return { error: "That is not a valid URL." };
  }
  if (u.username || u.password)
    return {
      error: "Put no user name or token in the URL: store the token under Settings → Git, and use the URL without it.",
    };
  if (u.search || u.hash) return { error: "A repository URL has no ?query or #fragment." };
  const protocol = u.protocol === "https:" ? "https" : "http";
  if (protocol === "http" && !LOOPBACK.has(u.hostname))
    return { error: "Plain http:// would send the token unencrypted: use https://." };
  if (!u.pathname || u.pathname === "/") return { error: "The URL names no repository (https://host/owner/repo.git)." };
  return { url: u.href, host: u.host.toLowerCase(), protocol };
}

/** A branch name git accepts and no program could read as an option. */
export const BranchName = z
  .string()
  .min(1)
  .max(200)
  .refine(
    (b) =>
      /^[A-Za-z0-9._/+@-]+$/.test(b) &&
      !b.startsWith("-") &&
      !b.startsWith("/") &&
      !b.endsWith("/") &&
      !b.endsWith(".") &&
      !b.endsWith(".lock") &&
      !b.includes("..") &&
      !b.includes("//") &&
      !b.includes("@{") &&
      b !== "@" &&
      b !== "HEAD" &&
      !b.split("/").some((p) => p.startsWith(".")),
    {
      message: "not a valid branch name",
    },
  );

export const RemoteUrlText = z
  .string()
  .min(1)
  .max(2000)
  .superRefine((u, ctx) => {
    const r = parseRemoteUrl(u);
    if ("error" in r) ctx.addIssue({ code: "custom", message: r.error });
  });

/** What git is given to sign in; the token never leaves the op. `scope`: the repository path
 *  prefix it is limited to (git-scope.ts), which the runner's credential helper enforces too. */
export const GitCredentialInput = z.object({
  username: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^\s:\x00-\x1f]+$/),
  token: z
    .string()
    .min(1)
    .max(4096)
    .regex(/^[\x21-\x7e]+$/),
  scope: GitScope.optional(),
});
export type GitCredentialInput = z.infer<typeof GitCredentialInput>;

const network = { url: RemoteUrlText, credential: GitCredentialInput.optional() };

export const GitRemoteInput = z.discriminatedUnion("action", [
  /** Offline: the remote URL, branch and how far it is ahead of/behind origin. */
  z.object({ action: z.literal("status") }),
  /** Into an empty workspace: the remote's default branch unless `branch` is given. */
  z.object({
    action: z.literal("clone"),
    ...network,
    branch: BranchName.optional(),
    /** The server is making this workspace (placement's fill): a clone of it cut off before (the
     *  runner killed) may be started over. Never set for a clone a person asks for. */
    making: z.literal(true).optional(),
  }),
  z.object({ action: z.literal("fetch"), ...network }),
  /** Fetch, then fast-forward the checked-out branch to origin's (never a merge). */
  z.object({ action: z.literal("pull"), ...network }),
  /** The checked-out branch's commit to the same branch on the remote (never forced). */
  z.object({ action: z.literal("push"), ...network }),
]);
export type GitRemoteInput = z.infer<typeof GitRemoteInput>;

/** `meta` of every ide_git_remote result. */
export const GitRemoteStatus = z.object({
  /** remote.origin.url as the workspace's configuration says (null: none, or not a git work tree). */
  origin: z.string().nullable(),
  /** The checked-out branch (null: detached or no repository). */
  branch: z.string().nullable(),
  /** Commits on the branch not on origin's, and on origin's not on the branch (null: no origin branch). */
  ahead: z.number().int().nonnegative().nullable(),
  behind: z.number().int().nonnegative().nullable(),
});
export type GitRemoteStatus = z.infer<typeof GitRemoteStatus>;

export const GIT_REMOTE_OP = "ide_git_remote";
