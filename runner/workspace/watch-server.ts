// The workspace watcher as a process of its own, which the runner starts inside the commands'
// sandbox (watch.ts) when there is one. @parcel/watcher adds an inotify watch by path for each
// new folder, and only the last component of that path is kept from following a link: a folder
// the agent swaps for a link between the folder's creation and the watch would have the runner
// watch, and report the names in, whatever that link leads to (another workspace, a masked
// home). In the sandbox the kernel resolves that path in the sandbox's own mounts, so the most
// such a race can reach is what the agent's commands can read already.
//
// argv: the workspace's real path, then the ignore globs as JSON. stdout: one line per event
// (server/protocol/watch-server.ts). stdin closing means the runner is gone.
import watcher from "@parcel/watcher";
import type { WatchServerEvent } from "../../server/protocol/watch-server";
import { insideRoot } from "./watch";

const [root, ignoreJson] = process.argv.slice(2);
const ignore = JSON.parse(ignoreJson ?? "[]") as string[];

const send = (event: WatchServerEvent) => process.stdout.write(`${JSON.stringify(event)}\n`);

const subscription = await watcher.subscribe(
  root,
  (err, events) => {
    if (err) return send({ type: "lost", message: err.message });
    const paths = events.flatMap((e) => insideRoot(root, e.path) ?? []);
    if (paths.length > 0) send({ type: "changed", paths });
  },
  { ignore },
);
send({ type: "ready" });

process.stdin.resume();
process.stdin.on("end", () => void subscription.unsubscribe().finally(() => process.exit(0)));
process.stdin.on("error", () => process.exit(0));
