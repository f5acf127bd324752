// What a real runner's sandbox shows of the home's revealed folders (home-open.ts): the PATH
// folders of the home run their binaries as they are and their scripts as redacted copies, and
// a host that renames a new raw file over a masked or redacted one while the warm sandbox runs
// never shows it there.
import { copyFile, mkdir, rename, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runShell, waitFor } from "../../server/testing/runner";
import { useRunnerPerTest } from "../../server/testing/runner-per-test";
import { fakeHome, runnerInHome } from "../testing/home";
import { sandboxInfo } from "./sandbox";

const bwrap = sandboxInfo("auto").available;

const t = useRunnerPerTest();

const shell = (command: string) => runShell(t.server!.pool, command);

describe.runIf(bwrap)("the home's PATH folders in the sandbox", () => {
  it("a binary and a clean script run; a script's secret reads redacted and it still runs; subfolders and links to masked files show nothing", async () => {
    const home = await fakeHome(t, {
      ".local/bin/deploy": "#!/bin/sh\nexport DEPLOY_TOKEN=FAKE-PATH-1\necho deploy-ran-$DEPLOY_TOKEN\n",
      ".local/bin/quiet":
        "#!/bin/bash\nprintf -v GH_PAT '%s' FAKE-PATH-2\nread -r API_KEY <<< 'FAKE PATH 3'\necho quiet-ran\n",
      "bin/clean": "#!/bin/bash\necho clean-ran\n",
      "bin/perl-tool": '#!/usr/bin/perl\nmy $API_KEY = "FAKE-PATH-4";\nprint "perl-ran\\n";\n',
      "bin/sub/helper.sh": "TOKEN=FAKE-PATH-5\n",
      "bin/notes": "no shebang, GITHUB_TOKEN=FAKE-PATH-6 inside\n",
      ".cargo/bin/cargo-deploy": "#!/bin/sh\nCARGO_REGISTRY_TOKEN=FAKE-PATH-7 echo cargo-deploy-ran\n",
      ".ssh/id_ed25519": "FAKE-PATH-KEY",
    });
    await copyFile("/bin/echo", join(home, ".cargo/bin/quiver-echo"));
    await symlink("../../bin/clean", join(home, ".local/bin/linked-clean"));
    await symlink(join(home, ".ssh/id_ed25519"), join(home, ".local/bin/sneaky"));
    await runnerInHome(t, home, { PATH: `${home}/.local/bin:${home}/bin:${home}/.cargo/bin:${process.env.PATH}` });

    const files = [".local/bin/deploy", ".local/bin/quiet", "bin/perl-tool", "bin/sub/helper.sh", "bin/notes"];
    const r = await shell(
      [
        `cat ${files.map((f) => `${home}/${f}`).join(" ")} ${home}/.cargo/bin/cargo-deploy ${home}/.local/bin/sneaky 2>/dev/null`,
        "echo",
        // By path: a login profile may set PATH anew (Debian's /etc/profile does for root).
        `${home}/.cargo/bin/quiver-echo binary-ran`,
        `${home}/bin/clean; ${home}/.local/bin/linked-clean; ${home}/.local/bin/deploy; ${home}/.local/bin/quiet`,
        `${home}/bin/perl-tool; ${home}/.cargo/bin/cargo-deploy`,
        `test -x ${home}/.local/bin/deploy && echo executable; test -e ${home}/bin/sub || echo no-subfolder`,
      ].join("; "),
    );
    expect(r.meta).toMatchObject({ sandboxed: true });
    expect(r.output).not.toMatch(/FAKE/);
    expect(r.output).toContain("QUIVER-REDACTED");
    expect(r.output.trim().split("\n").slice(-9)).toEqual([
      "binary-ran",
      "clean-ran",
      "clean-ran",
      "deploy-ran-QUIVER-REDACTED",
      "quiet-ran",
      "perl-ran",
      "cargo-deploy-ran",
      "executable",
      "no-subfolder",
    ]);
  }, 60_000);
});

describe.runIf(bwrap)("a host rename over a masked or redacted file while the warm sandbox runs", () => {
  it("shows neither the new raw file nor a credential file created after the start", async () => {
    const npmrc = ".nvm/versions/node/v20.0.0/etc/npmrc";
    const home = await fakeHome(t, {
      ".cargo/credentials.toml": "token = FAKE-OLD-1\n",
      ".cargo/config.toml": '[registries.x]\ntoken = "FAKE-OLD-2"\n# cfg-v1\n',
      [npmrc]: "//r.example/:_authToken=FAKE-OLD-3\n# npmrc-v1\n",
      ".config/git/config": "[user]\n\tname = Old Name\n",
    });
    await runnerInHome(t, home);
    const read = [
      "cat /tmp/warm-mark",
      `cat ${home}/.cargo/credentials.toml ${home}/.cargo/credentials ${home}/.cargo/config.toml ${home}/${npmrc} 2>&1`,
      `cat ${home}/.config/git/config ${home}/.config/git/credentials 2>&1`,
    ].join("; ");
    const first = await shell(`echo warm-$((6*7)) > /tmp/warm-mark; ${read}`);
    expect(first.output).toContain("warm-42");
    expect(first.output).toContain("cfg-v1");
    expect(first.output).not.toMatch(/FAKE/);

    // As an editor or `cargo login` saves: a new file renamed over the old one; and new files.
    const replace = async (rel: string, text: string) => {
      await writeFile(join(home, `${rel}.new`), text);
      await rename(join(home, `${rel}.new`), join(home, rel));
    };
    await replace(".cargo/credentials.toml", "token = FAKE-NEW-1\n");
    await replace(".cargo/config.toml", '[registries.x]\ntoken = "FAKE-NEW-2"\n# cfg-v2\n');
    await replace(npmrc, "//r.example/:_authToken=FAKE-NEW-3\n# npmrc-v2\n");
    await replace(".config/git/config", '[url "https://u:FAKE-NEW-4@x.example/"]\n\tinsteadOf = x\n# git-v2\n');
    await writeFile(join(home, ".cargo/credentials"), "token = FAKE-NEW-5\n");
    await mkdir(join(home, ".config/git"), { recursive: true });
    await writeFile(join(home, ".config/git/credentials"), "https://u:FAKE-NEW-6@x.example\n");

    // The same warm sandbox (its /tmp still holds the mark) until the redacted copies show the edit.
    let out = "";
    await waitFor(
      async () => {
        out = (await shell(read)).output;
        expect(out).toContain("warm-42");
        expect(out).not.toMatch(/FAKE/);
        return out.includes("cfg-v2") && out.includes("npmrc-v2") && out.includes("git-v2");
      },
      15_000,
      "the redacted copies of the new files",
    );
    expect(out).toContain("QUIVER-REDACTED");
  }, 60_000);
});
