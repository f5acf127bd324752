// What a person is shown of a result: the model's text without the instructions written for
// the model ("do not retry it", how to call retrieve_tool_result, how to poll a command). The
// model's copy (ToolCall.result, the dispatch result) keeps them; tool.finished carries this one.
// Every such phrase the server writes is listed here, next to what the person reads instead.
// A failure the pipeline or a tool wrote for the model (a `respond` error, a refusal) is shown
// as a one-line note; the exact text the model got stays one click away (`modelText`).
const MODEL_ONLY: [RegExp, string][] = [
  [/ This cannot be approved; do not retry it\. Tell the person if the task needs it\./g, " It cannot be approved."],
  [
    /The person already rejected this exact call in this session\./g,
    "This exact call was already rejected in this session; it did not run.",
  ],
  [/The person rejected this call; it did not run\./g, "Rejected; it did not run."],
  [/ Do not send it again as is\./g, ""],
  [/ Use the earlier result, change the arguments, or try a different approach\./g, ""],
  [/ Send the call again with complete arguments; if it carries a lot of content, split it into smaller calls\./g, ""],
  [/: call retrieve_tool_result with \{[^}\n]*\} \(or a line range or pattern\) to read the omitted part\./g, "."],
  [
    / Call shell with \{"session_id":"[^"\n]+"\} for more output and the exit code, or add "kill": true to stop it\./g,
    "",
  ],
];

// How network output reaches the model (finish.ts wrapExternal): marked so it reads as data, not
// instructions. The person reads the output itself; the marks stay in the model's copy.
const EXTERNAL = /^(<external_content(?: source="[^"\n]*")?>)\n([\s\S]*)\n(<\/external_content>)$/;

export function forPerson(modelText: string): string {
  let text = modelText;
  for (const [re, shown] of MODEL_ONLY) text = text.replace(re, shown);
  return text.replace(EXTERNAL, (_all, _open, body: string) => body);
}

/** Past this, the model's copy of a result is not repeated on the event: only what was left out. */
export const MODEL_TEXT_CAP = 16 * 1024;

// Advice to the model after a colon or semicolon ("The question is empty: write the question…").
const ADVICE =
  /[:;]\s+(write|use|call|send|try|keep|give|read|split|check|rerun|mark|do|fix|say|merge|report|change|ask|pass|add|remove|narrow)\b/i;

/** The first sentence of a message written for the model, without advice aimed at the model. */
export function personNote(text: string): string {
  const first = /^[\s\S]*?[.!?](?=\s|$)/.exec(text.trim())?.[0] ?? text.trim();
  const advice = ADVICE.exec(first);
  const cut = (advice ? `${first.slice(0, advice.index)}.` : first).replace(/\s+/g, " ");
  return cut.length > 240 ? `${cut.slice(0, 239)}…` : cut;
}

export interface PersonCopy {
  output: string;
  /** A person-facing line for a failure written for the model. */
  note?: string;
  /** What the model was told beyond the person's copy: the whole text behind a note, else the parts left out. */
  modelText?: string;
}

/**
 * The person's copy of a finished call's result. `written`: the text is a message to the model
 * (an error, a refusal), not a command's or a page's own output.
 */
export function personCopy(content: string, isError: boolean, written: boolean): PersonCopy {
  const output = forPerson(content);
  const note = isError && written && content.trim() ? personNote(output) : undefined;
  if (output === content && !note) return { output };
  const wrapped = EXTERNAL.exec(content);
  const left = [
    ...(wrapped ? [`${wrapped[1]} … ${wrapped[3]}`] : []),
    ...MODEL_ONLY.flatMap(([re]) => content.match(new RegExp(re.source, "g")) ?? []).map((t) => t.trim()),
  ];
  // A note replaces the whole text, so the whole (short) text stays reachable; otherwise only the left-out parts.
  const modelText = note && content.length <= MODEL_TEXT_CAP ? content : left.join("\n");
  return { output, ...(note ? { note } : {}), ...(modelText ? { modelText } : {}) };
}
