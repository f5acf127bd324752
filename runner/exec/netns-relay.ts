// The namespace relay: started by the runner (netns.ts) as the first process of a workspace's
// network namespace, so it holds that namespace, and it opens TCP connections inside it for the
// live preview, which the runner (outside, on the host's network) cannot open itself. It listens
// on a Unix socket (argv[2]) in a folder only the runner sees; each connection names a port
// (server/protocol/netns-relay.ts) and becomes that port's TCP stream on the namespace's own
// loopback, IPv4 first, then IPv6. Nothing else can be reached through it: the namespace has no
// route to the host's loopback. stdin closing means the runner is gone: the relay exits. Its
// stderr is plain lines the runner reads (netns.ts puts the last of them into the error it logs).
import { createServer, connect, type Socket } from "node:net";
import { unlinkSync } from "node:fs";
import { RELAY_LINE_MAX, RelayOpen, type RelayAnswer } from "../../server/protocol/netns-relay";

const path = process.argv[2];
if (!path) {
  process.stderr.write("netns relay: missing the socket path\n");
  process.exit(2);
}

function answer(client: Socket, a: RelayAnswer): void {
  client.write(`${JSON.stringify(a)}\n`);
}

function open(client: Socket, port: number, rest: Buffer): void {
  const hosts = ["127.0.0.1", "::1"];
  let first: NodeJS.ErrnoException | undefined;
  const attempt = (i: number) => {
    const upstream = connect({ host: hosts[i], port });
    upstream.once("error", (err: NodeJS.ErrnoException) => {
      upstream.destroy();
      first ??= err;
      if (i + 1 < hosts.length && (err.code === "ECONNREFUSED" || err.code === "EADDRNOTAVAIL")) return attempt(i + 1);
      // Without IPv6 in the namespace, ::1 fails otherwise: nothing listening is the news.
      const why = first.code === "ECONNREFUSED" && err.code !== "ECONNREFUSED" ? first : err;
      answer(client, { ok: false, code: why.code ?? "EIO", message: why.message });
      client.end();
    });
    upstream.once("connect", () => {
      upstream.removeAllListeners("error");
      answer(client, { ok: true });
      if (rest.length) upstream.write(rest);
      client.pipe(upstream).on("error", () => client.destroy());
      upstream.pipe(client).on("error", () => upstream.destroy());
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
  };
  attempt(0);
}

const server = createServer((client) => {
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const nl = head.indexOf(10);
    if (nl < 0) {
      if (head.length > RELAY_LINE_MAX) client.destroy();
      return;
    }
    client.off("data", onData);
    client.pause();
    let request: RelayOpen;
    try {
      request = RelayOpen.parse(JSON.parse(head.subarray(0, nl).toString("utf8")));
    } catch (err) {
      answer(client, { ok: false, code: "EINVAL", message: `bad request: ${(err as Error).message.slice(0, 200)}` });
      return void client.end();
    }
    open(client, request.port, head.subarray(nl + 1));
  };
  client.on("data", onData);
  client.on("error", () => client.destroy());
});

try {
  unlinkSync(path);
} catch {
  /* not there: the usual case */
}
server.on("error", (err) => {
  process.stderr.write(`netns relay: ${err.message}\n`);
  process.exit(1);
});
server.listen(path, () => process.stdout.write("ready\n"));
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
