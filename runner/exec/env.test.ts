// What scrubEnv keeps of the runner's environment for commands: secrets under short names and
// in URLs go, names that only contain such a word (GIT_AUTHOR_NAME, PATH) stay.
import { describe, expect, it } from "vitest";
import { scrubEnv } from "./env";

describe("scrubEnv", () => {
  it("drops short secret names and URLs carrying a token or a password anywhere in the value", () => {
    const env = scrubEnv({
      DB_PASS: "p",
      GH_PAT: "ghp_1",
      SENTRY_DSN: "https://k@o1.ingest.sentry.io/1",
      npm_config__auth: "dXNlcjpwdw==",
      SESSION_COOKIE: "c",
      CLONE_FROM: "https://ghp_abc@github.com/o/r.git",
      REMOTES: "origin postgres://u:pw@db/x",
      QUIVER_RUNNER_TOKEN: "t",
      GIT_AUTHOR_NAME: "A",
      PATH: "/usr/bin",
      TOX_TESTENV_PASSENV: "X",
      SITE: "https://github.com/o/r",
      REPO: "git@github.com:o/r.git",
    } as unknown as NodeJS.ProcessEnv);
    expect(env).toEqual({
      GIT_AUTHOR_NAME: "A",
      PATH: "/usr/bin",
      TOX_TESTENV_PASSENV: "X",
      SITE: "https://github.com/o/r",
      REPO: "git@github.com:o/r.git",
    });
  });
});
