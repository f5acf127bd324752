// The pipe from a workspace's watch server (runner/workspace/watch-server.ts), the process inside
// the commands' sandbox that watches the workspace for changes made outside the file tools: one
// JSON object per line, one way. The runner says what to watch and what to ignore on the command
// line and closes stdin to stop it; the paths it reports are checked again by the runner.
import { z } from "zod";

export const WatchServerEvent = z.discriminatedUnion("type", [
  /** Listening: changes from now on are reported. */
  z.object({ type: z.literal("ready") }),
  /** Paths relative to the workspace root ("/"-separated), one batch of the watcher's events. */
  z.object({ type: z.literal("changed"), paths: z.array(z.string().min(1)) }),
  /** The watcher lost track (a folder it could not watch, a failed read): what changed is unknown. */
  z.object({ type: z.literal("lost"), message: z.string() }),
]);
export type WatchServerEvent = z.infer<typeof WatchServerEvent>;
