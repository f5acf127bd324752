// The local runner's environment carries no model keys, database URL or server secrets.
import { describe, expect, it } from "vitest";
import { runnerEnvironment } from "./local-runner";

describe("runnerEnvironment", () => {
  it("drops provider keys, the database URL and the server's runner token, keeps the rest", () => {
    const env = runnerEnvironment({
      PATH: "/usr/bin",
      HOME: "/root",
      ANTHROPIC_API_KEY: "sk-ant",
      OPENAI_BASE_URL: "http://x",
      DATABASE_URL: "postgresql://u:p@h/db",
      QUIVER_RUNNER_TOKEN: "shared-secret-0123456789",
      QUIVER_SANDBOX: "auto",
    });
    expect(env).toEqual({ PATH: "/usr/bin", HOME: "/root", QUIVER_SANDBOX: "auto" });
  });
});
