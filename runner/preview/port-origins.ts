// Which side first answered each preview origin (a session's port: `<port>-<session>.localhost`)
// of the default workspace, whose preview may reach the machine's loopback: the workspace's
// network namespace or the machine. An origin stays with that side for good, so it never changes
// hands under a page that already runs there: the agent's page cannot have the machine's service
// answer its origin once its own server stops, and a server the agent starts cannot take over
// the origin, cookies and storage of a machine's app the person previewed. Kept in a small file
// outside every sandbox, so a runner restart forgets nothing; where that file cannot be written
// the binding still holds until the runner stops (the log says so once).
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { z } from "zod";

export type PortSide = "workspace" | "machine";

/** Origins kept; the oldest are dropped past it (about 60 bytes each on disk). */
const MAX_ORIGINS = 10_000;

const Stored = z.object({ origins: z.record(z.string(), z.enum(["workspace", "machine"])) });

export class PortOrigins {
  private readonly sides = new Map<string, PortSide>();
  private warned = false;

  constructor(
    private readonly file?: string,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    if (file) this.load(file);
  }

  sideOf(sessionId: string, port: number): PortSide | undefined {
    return this.sides.get(`${sessionId}:${port}`);
  }

  /** Binds the origin to `side` if nothing has yet; the file is rewritten whole before this returns. */
  bind(sessionId: string, port: number, side: PortSide): void {
    const key = `${sessionId}:${port}`;
    if (this.sides.has(key)) return;
    this.sides.set(key, side);
    for (const oldest of this.sides.keys()) {
      if (this.sides.size <= MAX_ORIGINS) break;
      this.sides.delete(oldest);
    }
    this.save();
  }

  private load(file: string): void {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") this.log(`preview origins: cannot read ${file}: ${err}`);
      return;
    }
    let parsed: ReturnType<typeof Stored.safeParse>;
    try {
      parsed = Stored.safeParse(JSON.parse(text));
    } catch {
      parsed = Stored.safeParse(undefined);
    }
    if (!parsed.success) return this.log(`preview origins: ${file} is not a list of origins; starting afresh`);
    for (const [key, side] of Object.entries(parsed.data.origins)) this.sides.set(key, side);
  }

  private save(): void {
    if (!this.file) return;
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, JSON.stringify({ origins: Object.fromEntries(this.sides) }), { mode: 0o600, flush: true });
      renameSync(tmp, this.file);
    } catch (err) {
      if (!this.warned) this.log(`preview origins: cannot write ${this.file} (${err}); kept until the runner stops`);
      this.warned = true;
    }
  }
}
