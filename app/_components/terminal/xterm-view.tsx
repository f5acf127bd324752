"use client";
// xterm attached to a runner PTY through /terminal (browser only, loaded with next/dynamic).
// The terminal id (the session's, from terminal-tabs.tsx) makes a reload, another page or a
// dropped socket attach to the same shell; the server replays only output past what this xterm
// already shows. Resizes follow the pane. Unmounted, it lets go of the socket and the shell
// keeps running (up to the server's idle limit), unless `ending()` says the person closed it.
// A shell that ended says why in the terminal; Enter there starts a new one under the same id.
// Ctrl+click (Cmd+click) follows a link in the output (terminal-links.ts): a workspace file at
// its line, a local address in the preview, any other address in a new tab. Ctrl+F inside the
// terminal opens a find box over it (terminal-find.tsx, xterm's search addon). A program's OSC 8
// hyperlink opens the same way, never on a plain click. Repeat counts past the screen are
// dropped (bounded-counts.ts).
// An interrupt key (^C, ^\, ^Z) goes in a frame of its own and is also said on the session's
// list socket (`interrupt`), naming that frame: this socket may be paused by the server behind a
// paste the program does not read, and the key must be able to skip it, as on a real terminal.
import { useEffect, useRef, useState } from "react";
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import { SearchAddon } from "@xterm/addon-search";
import "@xterm/xterm/css/xterm.css";
import { describeEnd, type TerminalServerMessage } from "../../../server/protocol/terminal";
import { useDarkMode } from "../../_lib/theme";
import { terminalLinks, type LinkTarget } from "../../_lib/terminal-links";
import { TerminalFind } from "./terminal-find";
import { boundCounts } from "./bounded-counts";

export type TerminalState = "connecting" | "open" | "closed" | "exited";

const light = { background: "#ffffff", foreground: "#1f2328", cursor: "#1f2328", selectionBackground: "#0969da44" };
const dark = { background: "#161b22", foreground: "#e6edf3", cursor: "#e6edf3", selectionBackground: "#4493f855" };

interface Props {
  sessionId: string;
  termId: string;
  onState(s: TerminalState): void;
  focusSignal: number;
  /** Asked as it unmounts: true when the person closed this terminal (its shell ends now). */
  ending?(): boolean;
  /** Whether the workspace has this file (only those paths become links). */
  isFile?(path: string): boolean;
  onLink?(target: LinkTarget): void;
  /** When the session's list says this id's shell started: a new value (another page started a
   *  new shell in an ended tab) attaches this view to it. */
  startedAt?: number;
  /** Says an interrupt key out of band too (terminal-tabs.tsx's list socket). */
  interrupt?(socket: string, key: string, after: number): void;
}

const KEYS = "\x03\x1c\x1a";
function interruptAt(data: string): number {
  for (let i = 0; i < data.length; i++) if (KEYS.includes(data[i])) return i;
  return -1;
}

/** An OSC 8 hyperlink's address as a link target: a whole http(s) address, else nothing. */
function hyperlinkTarget(uri: string): LinkTarget | undefined {
  const [found] = terminalLinks(uri, () => false);
  return found && found.start === 0 && found.end === uri.length ? found.target : undefined;
}
const hintOf = (uri: string) => {
  const target = hyperlinkTarget(uri);
  return target ? linkHint(target) : `${uri} (not opened)`;
};

const linkHint = (t: LinkTarget) =>
  `${t.kind === "file" ? `Open ${t.path}${t.line ? `:${t.line}` : ""}` : t.preview ? `Show ${t.url} in the preview` : `Open ${t.url}`} (Ctrl+click)`;

export default function XtermView({
  sessionId,
  termId,
  onState,
  focusSignal,
  ending,
  isFile,
  onLink,
  startedAt,
  interrupt,
}: Props) {
  const reattach = useRef<(() => void) | null>(null);
  const host = useRef<HTMLDivElement>(null);
  const term = useRef<Terminal | null>(null);
  const isDark = useDarkMode();
  const onStateRef = useRef(onState);
  onStateRef.current = onState;
  const endingRef = useRef(ending);
  const interruptRef = useRef(interrupt);
  interruptRef.current = interrupt;
  endingRef.current = ending;
  const linkRef = useRef({ isFile, onLink });
  linkRef.current = { isFile, onLink };
  const [search, setSearch] = useState<SearchAddon>();
  const [finding, setFinding] = useState(false);

  useEffect(() => {
    const t = new Terminal({
      fontSize: 13,
      fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace",
      scrollback: 5000,
      cursorBlink: true,
      theme: isDark ? dark : light,
      // The search addon highlights matches with decorations, still a "proposed" xterm API.
      allowProposedApi: true,
      // A program's OSC 8 hyperlink (any text, any http(s) address behind it) follows the IDE's
      // own rule: Ctrl+click, the address it leads to named on hover. xterm's default opened it on
      // a plain click, behind a confirm() dialog that blocks the whole page.
      linkHandler: {
        activate: (e, uri) => {
          const target = (e.ctrlKey || e.metaKey) && hyperlinkTarget(uri);
          if (target) linkRef.current.onLink?.(target);
        },
        hover: (_e, uri) => void (host.current && (host.current.title = hintOf(uri))),
        leave: () => void (host.current && (host.current.title = "")),
      },
    });
    const counts = boundCounts(t);
    const fit = new FitAddon();
    t.loadAddon(fit);
    const searchAddon = new SearchAddon();
    t.loadAddon(searchAddon);
    setSearch(searchAddon);
    // Ctrl+F (Cmd+F) finds in the output instead of reaching the shell or the browser's find.
    t.attachCustomKeyEventHandler((e) => {
      if (e.type === "keydown" && (e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.code === "KeyF") {
        e.preventDefault();
        setFinding(true);
        return false;
      }
      return true;
    });
    t.open(host.current!);
    term.current = t;
    // Fitted only while shown: in a hidden tab (display: none) the fit addon reads the host's
    // "100%" as 100 px and made the terminal 10×6, a size then given to the shell every page
    // shares. Until it has been measured, a view neither sends a size nor asks for one.
    let measured = false;
    const fitShown = () => {
      if (!host.current?.offsetWidth || !host.current.offsetHeight) return;
      const first = !measured;
      measured = true;
      try {
        fit.fit();
      } catch {
        /* detached */
      }
      // Shown for the first time: the shell learns this view's size even if fitting changed nothing.
      if (first) send({ type: "resize", cols: t.cols, rows: t.rows });
    };
    const links = t.registerLinkProvider({
      provideLinks(y, callback) {
        const line = t.buffer.active.getLine(y - 1);
        if (!line) return callback(undefined);
        // The row's text and the cell each character sits in (a wide character takes two).
        let text = "";
        const cellOf: number[] = [];
        for (let x = 0; x < line.length; x++) {
          const cell = line.getCell(x);
          if (!cell || cell.getWidth() === 0) continue;
          for (const ch of cell.getChars() || " ") {
            text += ch;
            cellOf.push(x);
          }
        }
        const found = terminalLinks(text, (p) => linkRef.current.isFile?.(p) ?? false);
        if (found.length === 0) return callback(undefined);
        callback(
          found.map((l) => ({
            range: { start: { x: cellOf[l.start] + 1, y }, end: { x: cellOf[l.end - 1] + 1, y } },
            text: text.slice(l.start, l.end),
            decorations: { pointerCursor: true, underline: true },
            // A plain click selects or places the cursor, as in VS Code's terminal.
            activate: (e) => void ((e.ctrlKey || e.metaKey) && linkRef.current.onLink?.(l.target)),
            hover: () => void (host.current && (host.current.title = linkHint(l.target))),
            leave: () => void (host.current && (host.current.title = "")),
          })),
        );
      },
    });
    let ws: WebSocket | undefined;
    let offset = 0;
    let disposed = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let attempt = 0;
    let exited = false;
    /** Frames sent on this socket, and its id from the server (absent: an older server). */
    let frames = 0;
    let socketId: string | undefined;
    const id = termId;
    const send = (msg: object) => ws?.readyState === WebSocket.OPEN && (frames++, ws.send(JSON.stringify(msg)));

    const connect = (restart = false) => {
      if (disposed) return;
      exited = false;
      onStateRef.current("connecting");
      frames = 0;
      socketId = undefined;
      const q = new URLSearchParams({
        session: sessionId,
        term: id,
        ...(measured ? { cols: String(t.cols), rows: String(t.rows) } : {}),
        offset: String(offset),
        ...(restart ? { restart: "1" } : {}),
      });
      const sock = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/terminal?${q}`);
      ws = sock;
      sock.onmessage = (e) => {
        const msg = JSON.parse(String(e.data)) as TerminalServerMessage;
        if (msg.type === "attached") {
          attempt = 0;
          if (msg.reset) t.reset();
          offset = msg.offset;
          socketId = msg.socket;
          // The pane may have been fitted again while the socket opened (fonts, layout): a resize
          // then could not be sent, and a shell wider than the screen garbles wrapped lines.
          if (measured) send({ type: "resize", cols: t.cols, rows: t.rows });
          onStateRef.current("open");
        } else if (msg.type === "data") {
          offset += msg.data.length;
          t.write(msg.data);
        } else if (msg.type === "ended") {
          t.write(`\r\n\x1b[2m[terminal ${describeEnd(msg.reason)}; press Enter for a new shell]\x1b[0m\r\n`);
          offset = 0;
          exited = true;
          onStateRef.current("exited");
        } else if (msg.type === "error") {
          t.write(`\r\n\x1b[31m${msg.message}\x1b[0m\r\n`);
        }
      };
      sock.onclose = () => {
        if (disposed || ws !== sock || exited) return;
        onStateRef.current("closed");
        retry = setTimeout(connect, Math.min(5_000, 300 * 2 ** attempt++));
      };
    };
    /** Input, with each interrupt key said out of band where the server can take it. */
    const type = (data: string) => {
      for (let at = interruptAt(data); at >= 0; at = interruptAt(data)) {
        if (at > 0) send({ type: "input", data: data.slice(0, at) });
        if (socketId) interruptRef.current?.(socketId, data[at], frames);
        send({ type: "input", data: data[at] });
        data = data.slice(at + 1);
      }
      if (data) send({ type: "input", data });
    };
    const input = t.onData((data) => {
      if (ws?.readyState === WebSocket.OPEN) type(data);
      // After the shell exited, Enter opens a fresh one.
      else if (exited && data === "\r") {
        clearTimeout(retry);
        ws?.close();
        connect(true);
      }
    });
    reattach.current = () => {
      if (!exited) return;
      clearTimeout(retry);
      ws?.close();
      connect();
    };
    // The size on the element too: what the shell must be told (tests compare it with `tput cols`).
    const showSize = () => host.current?.setAttribute("data-size", `${t.cols}x${t.rows}`);
    showSize();
    const resized = t.onResize(({ cols, rows }) => (showSize(), measured && send({ type: "resize", cols, rows })));
    const observer = new ResizeObserver(fitShown);
    observer.observe(host.current!);
    fitShown(); // before connecting: a shown view attaches with its size
    connect();

    return () => {
      disposed = true;
      reattach.current = null;
      clearTimeout(retry);
      observer.disconnect();
      links.dispose();
      counts.dispose();
      input.dispose();
      resized.dispose();
      if (endingRef.current?.()) send({ type: "close" });
      ws?.close();
      t.dispose(); // disposes its addons too
      term.current = null;
      setSearch(undefined);
      setFinding(false);
    };
    // the theme is applied below without reconnecting
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [sessionId, termId]);

  useEffect(() => {
    if (term.current) term.current.options.theme = isDark ? dark : light;
  }, [isDark]);

  useEffect(() => {
    if (focusSignal) term.current?.focus();
  }, [focusSignal]);

  useEffect(() => {
    if (startedAt) reattach.current?.();
  }, [startedAt]);

  return (
    <div style={{ position: "relative", height: "100%", width: "100%" }}>
      <div ref={host} style={{ height: "100%", width: "100%", padding: "2px 0 0 6px" }} data-testid="xterm" />
      {finding && search && (
        <TerminalFind
          search={search}
          onClose={() => {
            setFinding(false);
            term.current?.focus();
          }}
        />
      )}
    </div>
  );
}
