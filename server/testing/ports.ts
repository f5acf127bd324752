// Test helper: a TCP port free on the loopback interface right now, for a child process (a
// server, a runner) that must be told its port before it starts. Another process may take it in
// between; the callers' children fail loudly if so.
import { createServer } from "node:net";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
