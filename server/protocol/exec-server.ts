// The pipe between a runner and its exec server (runner/exec/exec-server.ts), the long-lived
// process inside the sandbox that starts the agent's commands: one JSON object per line, each
// way. The runner decides everything (argv, cwd, environment); the exec server only spawns,
// streams and kills, so it holds no policy of its own.
import { z } from "zod";

const id = z.number().int().positive();

export const ExecServerRequest = z.discriminatedUnion("type", [
  /** Environment every later spawn starts from (the login snapshot); replaces the previous one. */
  z.object({ type: z.literal("env"), env: z.record(z.string(), z.string()) }),
  z.object({
    type: z.literal("spawn"),
    id,
    argv: z.array(z.string()).min(1),
    cwd: z.string().min(1),
    /** Merged over the defaults set by `env`. */
    env: z.record(z.string(), z.string()),
    /**
     * Without a PID namespace per command: every process whose environment carries
     * QUIVER_EXEC_ID=<this> is killed when the command exits or is killed. Absent when the
     * command's own namespace already guarantees that.
     */
    sweepMarker: z.string().min(1).optional(),
  }),
  /**
   * The command shell: argv of a process that reads its command from stdin. One is kept started
   * ahead (cwd, default environment), so a `run` pays for no fork or exec of its own.
   */
  z.object({ type: z.literal("shell"), argv: z.array(z.string()).min(1), cwd: z.string().min(1) }),
  /** Hands `input` to the command shell started ahead (or to a new one) and closes its stdin. */
  z.object({ type: z.literal("run"), id, input: z.string() }),
  /** SIGKILL the command's process group (and its marked stragglers). */
  z.object({ type: z.literal("kill"), id }),
]);
export type ExecServerRequest = z.infer<typeof ExecServerRequest>;

export const ExecServerEvent = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready"), pid: z.number().int() }),
  /** A chunk of the command's stdout (1) or stderr (2), base64: output is bytes, not text. */
  z.object({ type: z.literal("output"), id, fd: z.union([z.literal(1), z.literal(2)]), data: z.string() }),
  /** The command exited and its pipes are drained; `error` when it could not be started. */
  z.object({
    type: z.literal("exit"),
    id,
    code: z.number().int().nullable(),
    signal: z.string().nullable(),
    error: z.string().optional(),
  }),
]);
export type ExecServerEvent = z.infer<typeof ExecServerEvent>;
