// A host socket that vanishes while a sandbox starts, made real: a socket the sandbox covers (in
// /var/tmp, outside its private /tmp), and a bwrap wrapper that removes it just before it execs
// the real bwrap with the stale arguments on its first start only. bwrap then fails with "Can't
// create file at <socket>" as it does when a database restarts at that moment.
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { sandboxInfo } from "../exec/sandbox";
import type { SandboxInfo } from "../exec/sandbox";

export interface SocketRace {
  /** The sandbox description whose bwrap loses the race on its first start. */
  sandbox: SandboxInfo;
  /** The socket that goes away. */
  socket: string;
  /** How many times bwrap was started through the wrapper. */
  starts(): Promise<number>;
  dispose(): Promise<void>;
}

export async function loseSocketRace(): Promise<SocketRace> {
  const dir = await mkdtemp("/var/tmp/quiver-vanish-");
  const socket = join(dir, "service.sock");
  const server: Server = createServer((c) => c.end("hello\n"));
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  const real = sandboxInfo("auto").bwrap!;
  const wrapper = join(dir, "bwrap");
  const log = join(dir, "starts");
  await writeFile(
    wrapper,
    `#!/bin/bash\necho >> '${log}'\nif [ ! -e '${dir}/started' ]; then : > '${dir}/started'; rm -f '${socket}'; fi\nexec '${real}' "$@"\n`,
  );
  await chmod(wrapper, 0o755);
  return {
    sandbox: { available: true, kind: "bubblewrap", bwrap: wrapper },
    socket,
    starts: async () => (await readFile(log, "utf8").catch(() => "")).length,
    dispose: async () => {
      await new Promise((r) => server.close(r));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
