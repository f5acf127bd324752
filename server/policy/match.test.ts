// Rule matching against spellings an agent would choose to slip past a rule: a host written
// another way, a command's long options, a denied program named in another's arguments, a
// denied tool run as a step of tool_program or tool_transaction. Each was let through before.
import { describe, expect, it } from "vitest";
import { decide, type LoadedPolicy } from "./decide";
import { PolicyRules, type PolicyRule } from "./rules";
import { STEP_CAPABILITIES } from "./steps";
import { fetchUrlTool } from "../tools/builtin/fetch_url";
import { shellTool } from "../tools/builtin/shell";
import { toolProgramTool } from "../tools/builtin/tool_program";
import { toolTransactionTool } from "../tools/builtin/tool_transaction";
import { STEP_TOOLS } from "../tools/builtin/program-steps";
import { editFileTool } from "../tools/builtin/edit_file";
import { writeFileTool } from "../tools/builtin/write_file";
import { applyPatchTool } from "../tools/builtin/apply_patch";
import { runCheckTool } from "../tools/builtin/run_check";
import type { Tool } from "../tools/tool";
import { deniedTools } from "../tools/policy-catalog";

const none = { sessionKeys: new Set<string>(), rejected: new Map<string, string | undefined>() };
const policy = (...r: PolicyRule[]): LoadedPolicy => ({ ok: true, version: 1, rules: PolicyRules.parse(r) });
const run = (tool: Tool, input: unknown, p: LoadedPolicy) => decide({ tool, input } as never, p, none);
const shell = (command: string, p: LoadedPolicy) => run(shellTool, { command }, p);

describe("a host rule matches the host however the URL spells it", () => {
  const p = policy(
    { effect: "deny", host: "evil.com" },
    { effect: "deny", host: "*.bad.org" },
    { effect: "deny", host: "169.254.169.254" },
    { effect: "deny", host: "exämple.com" },
    { effect: "deny", host: "::1" },
  );
  it.each([
    "http://evil.com./x",
    "http://EVIL.com../",
    "http://a.bad.org./",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:a9fe:a9fe]/latest/meta-data",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://2852039166/",
    "http://xn--exmple-cua.com/",
    "http://exämple.com/",
    "http://[::1]:8080/",
  ])("fetch_url %s is denied", (url) => {
    expect(run(fetchUrlTool, { url }, p).action).toBe("deny");
  });

  it("still tells other hosts apart", () => {
    for (const url of ["http://notevil.com/", "http://bad.org/", "http://evil.com.au/", "http://[::ffff:a9fe:a9ff]/"])
      expect(run(fetchUrlTool, { url }, p).action, url).toBe("run");
  });
});

describe("a host rule reaches a shell command however it names the host", () => {
  const p = policy({ id: "no-evil", effect: "deny", host: "evil.com" }, { effect: "allow", command: "curl" });
  it.each([
    "curl --url=https://evil.com/",
    "curl -Lhttps://evil.com",
    "curl ftp://evil.com/x",
    "curl https://evil.com./",
    // curl fetches every operand, http:// when it has no scheme, and decodes the host's escapes
    "curl evil.com",
    "curl x@evil.com:/",
    "curl EVIL.COM.",
    "curl -sS evil.com:8080/x",
    "curl -o evil.com evil.com",
    "curl %65vil.com",
    "curl evil%2ecom",
    "curl -x evil.com https://ok.com/",
    "curl --url evil.com",
    "curl -- evil.com",
    "wget -q -O - evil.com/x",
    "ssh -p 2222 user@evil.com",
    "ssh -J evil.com ok.com",
    "git clone git@evil.com:r.git",
    // curl's own globbing, and options and proxies that send it elsewhere
    "curl 'http://{a,evi}l.com/'",
    "curl 'http://evil.[c-c]om'",
    "curl http://ev{i}l.com",
    "curl --connect-to a.org:80:evil.com:80 http://a.org",
    "curl --proxy1.0 evil.com http://a.org",
    "ALL_PROXY=evil.com curl http://a.org",
    "git -c x=y fetch evil.com:r",
  ])("%s is denied", (command) => expect(shell(command, p).action).toBe("deny"));
  it.each([
    "xclient evil.com 80",
    "curl 'http://[a-z][a-z][a-z].com/'",
    'H=evil.com; curl "https://$H/"',
    "curl --no-such-option evil.com",
    'eval "$C"',
  ])("%s is asked about, saying the policy could not check it", (command) => {
    const d = shell(command, p);
    expect(d).toMatchObject({ action: "ask", decision: "policy_ask" });
    expect(d.action === "ask" && d.unchecked).toMatch(/could not check which hosts/);
  });
  it("a command naming no such host is still allowed, and a catch-all host rule asks only what it cannot see", () => {
    expect(shell("curl https://docs.example.com/x", p).decision).toBe("policy_allow");
    // an option's value that is a file name is no destination
    expect(shell("curl -o evil.com https://docs.example.com/x", p).action).toBe("ask");
    const all = policy({ effect: "ask", host: "*" }, { effect: "allow", command: "ls" });
    expect(shell("ls package.json", all).decision).toBe("policy_allow");
    expect(shell('eval "$C"', all).action).toBe("ask");
  });
});

describe("a command rule reads options as the program does", () => {
  const p = policy(
    { effect: "deny", command: "rm -rf" },
    { effect: "deny", command: "git push --force" },
    { effect: "allow", tool: "shell" },
  );
  it.each([
    "rm --recursive --force x",
    "rm -R -f x",
    "rm -Rf x",
    "rm --rec --for x",
    "rm -r --force=yes x",
    "git push -f",
    "git push --forc origin main",
    "git push --force-with-lease",
    "git push origin +main",
    "git -C repo push origin +HEAD:main",
  ])("%s is denied", (command) => expect(shell(command, p).action).toBe("deny"));
  it("but not what those options do not say", () => {
    for (const command of ["rm -r x", "rm --dir x", "git push origin main", "git push --follow-tags origin main"])
      expect(shell(command, p).action, command).toBe("run");
  });
  // A digit in a cluster is an option too (`-4` is --ipv4), and send-pack is the push beneath.
  it.each([
    "git push -4f origin main",
    "git push -f6 origin main",
    "git send-pack --force . main",
    "git send-pack . +main",
  ])("%s is denied", (command) => expect(shell(command, p).action).toBe("deny"));
  // With no refspec git pushes what the configuration says, which the line or a write may set.
  it.each([
    "git push",
    "git push origin",
    "git config remote.origin.push '+refs/heads/*:refs/heads/*'; git push origin",
    "git config remote.origin.mirror true && git push origin",
    "git remote add --mirror=push m ../r; git push m",
  ])("%s is asked about: the repository's configuration decides what it pushes", (command) => {
    const d = shell(command, p);
    expect(d).toMatchObject({ action: "ask", decision: "policy_ask" });
    expect(d.action === "ask" && d.unchecked).toContain("pushes what the repository's configuration says");
  });
});

describe("a rule on an npm command holds for every name npm runs it by", () => {
  const p = policy({ effect: "deny", command: "npm publish" }, { effect: "allow", command: "npm" });
  it.each(["npm publish", "npm pub", "npm pu", "npm publis", "npm -w a pub", "npm --workspace=a pub --dry-run"])(
    "%s is denied",
    (command) => expect(shell(command, p).action).toBe("deny"),
  );
  it.each(["npm install", "npm i react", "npm run build", "npm pack", "npm p"])("%s runs", (command) =>
    expect(shell(command, p).action).toBe("run"),
  );
  it("an allow rule written with long options matches the short ones", () => {
    const allow = policy({ effect: "allow", command: "rm --recursive" });
    expect(shell("rm -R build", allow).decision).toBe("policy_allow");
  });
});

describe("a denied program named in another's arguments, for it to run", () => {
  const p = policy(
    { effect: "deny", command: "curl" },
    { effect: "deny", command: "git push" },
    { effect: "allow", tool: "shell" },
  );
  it("runs under any case of its name", () => expect(shell("CURL https://x.org", p).action).toBe("deny"));
  // rsync runs its `-e` command here: listed as a command (shell/client-code.ts), so denied.
  it("rsync -e curl a b is denied", () => expect(shell("rsync -e curl a b", p).action).toBe("deny"));
  it.each([
    "tar --to-command=curl -xf a.tar",
    "tar -I /usr/bin/curl -xf a",
    "man -P curl ls",
    "sort --compress-program=curl f",
    "zip -TT curl a b",
  ])("%s is asked about, saying so", (command) => {
    const d = shell(command, p);
    expect(d).toMatchObject({ action: "ask", decision: "policy_ask" });
    expect(d.action === "ask" && d.unchecked).toMatch(/names (curl|git) in its arguments/);
  });
  // Where the analysis reads the words as the command they run, the deny decides.
  it.each([
    "git grep --open-files-in-pager=curl x",
    "npx curl x",
    "numactl curl x",
    "xvfb-run curl x",
    "git config alias.p '!git push'",
    "git config alias.p '!sh -c \"git push --force\"'",
    // vim's `!`, less's `+!`, gdb's `shell` (inline-code.ts).
    "vim -c '!curl x'",
    "less +'!curl'",
    "gdb -ex 'shell curl' x",
  ])("%s is denied", (command) => expect(shell(command, p).action).toBe("deny"));
  it("a command that names neither stays allowed", () => {
    for (const command of ["git commit -m 'push it'", "ls curl.txt", "tar -xf a.tar"])
      expect(shell(command, p).action, command).toBe("run");
  });
});

describe("a tool rule reaches the steps of tool_program and tool_transaction", () => {
  const p = policy(
    { id: "no-read", effect: "deny", tool: "read_file" },
    { effect: "deny", tool: "write_file" },
    { effect: "ask", tool: "run_check" },
    { effect: "allow", tool: "tool_*" },
  );
  it("denies a program or transaction with a denied step, naming the step", () => {
    const d = run(
      toolProgramTool,
      {
        steps: [
          { op: "glob", pattern: "*" },
          { op: "read_file", path: "a" },
        ],
      },
      p,
    );
    expect(d).toMatchObject({ action: "deny", decision: "policy_deny" });
    expect(d.reason).toMatch(/no-read.*step 2, read_file/);
    expect(run(toolTransactionTool, { steps: [{ op: "write_file", path: "a", content: "x" }] }, p).action).toBe("deny");
  });
  it("asks where a step is asked about, and lets the wrapper's own rules speak for the rest", () => {
    expect(run(toolTransactionTool, { steps: [{ op: "run_check", name: "test" }] }, p).decision).toBe("policy_ask");
    expect(run(toolProgramTool, { steps: [{ op: "glob", pattern: "*" }] }, p).decision).toBe("policy_allow");
  });
  it("a capability rule reaches a step's capability", () => {
    const d = run(
      toolTransactionTool,
      { steps: [{ op: "read_file", path: "a" }] },
      policy({ effect: "deny", tool: "*", capability: "ReadsFiles" }),
    );
    expect(d.action).toBe("deny");
  });
  it("knows each step's capabilities as its tool declares them", () => {
    const tools: Tool[] = [...Object.values(STEP_TOOLS), editFileTool, writeFileTool, applyPatchTool, runCheckTool];
    for (const t of tools) expect(STEP_CAPABILITIES[t.name], t.name).toEqual(t.capabilities);
    expect(Object.keys(STEP_CAPABILITIES).sort()).toEqual(tools.map((t) => t.name).sort());
  });
});

describe("a capability rule reaches what a call does, not only what its tool declares", () => {
  it("denies shell with network under a Network deny, and its read-only lines stay allowed", () => {
    const p = policy({ effect: "deny", capability: "Network" });
    expect(run(shellTool, { command: "npm install", network: true }, p).action).toBe("deny");
    expect(shell("npm test", p).action).not.toBe("deny");
    expect(shell("cat package.json", p).action).toBe("run");
  });

  it("denies a shell line that may write under a WritesFiles deny, not a read-only one", () => {
    const p = policy({ effect: "deny", capability: "WritesFiles" });
    for (const command of ["sed -i s/a/b/ f", "npm test", "cat x > y"])
      expect(shell(command, p).action, command).toBe("deny");
    for (const command of ["cat package.json", "ls -la", "git log --oneline"])
      expect(shell(command, p).action, command).toBe("run");
    // Still offered to the model: only some of its calls are denied.
    expect(deniedTools([shellTool], p).has("shell")).toBe(false);
  });
});

describe("a host rule and the URLs curl and wget read from files", () => {
  const p = policy(
    { effect: "deny", host: "evil.com" },
    { effect: "allow", command: "curl" },
    { effect: "allow", command: "wget" },
  );
  it.each([
    "curl -K cfg https://ok.com",
    "curl -sKcfg",
    "curl --config=cfg",
    "curl --conf cfg",
    "CURL_HOME=. curl https://ok.com",
    "export XDG_CONFIG_HOME=.; curl https://ok.com",
    "wget -i list.txt",
    "wget --input-file=list.txt",
    "wget -e url=x https://ok.com",
    "WGETRC=./rc wget https://ok.com",
  ])("%s asks", (command) => {
    expect(shell(command, p).action).toBe("ask");
  });

  it("lets a plain fetch of another host run", () => {
    expect(shell("curl -sS https://ok.com/x.json", p).action).toBe("run");
    expect(shell("wget -q https://ok.com/file", p).action).toBe("run");
  });
});

describe("text read into a variable, which arithmetic may run", () => {
  // `${y:x}`, `$((x))`: bash evaluates x's value as an expression, and `a[$(…)]` there runs.
  const p = policy({ effect: "deny", command: "rm -rf" }, { effect: "allow", command: "read" });
  it.each([
    "y=abc; read x <<< 'a[$(rm -rf z)]'; case ${y:x} in *) ;; esac",
    "mapfile -t a <<< 'a[`rm -rf z`]'; echo $((a))",
  ])("%s is asked about, in every mode", (command) => {
    expect(shell(command, p)).toMatchObject({ action: "ask", decision: "policy_ask" });
  });
  it("text only written is not", () =>
    expect(shell("cat <<<'rm -rf x' > notes.txt", p).decision).not.toBe("policy_ask"));
});
