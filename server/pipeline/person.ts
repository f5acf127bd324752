// What a person is shown of a result: the model's text without the instructions written for
// the model ("do not retry it", how to call retrieve_tool_result, how to poll a command). The
// model's copy (ToolCall.result, the dispatch result) keeps them; tool.finished carries this one.
// Every such phrase the server writes is listed here, next to what the person reads instead.
const MODEL_ONLY: [RegExp, string][] = [
  [/ This cannot be approved; do not retry it\. Tell the person if the task needs it\./g, " It cannot be approved."],
  [/The person already rejected this exact call in this session\./g, "This exact call was already rejected in this session; it did not run."],
  [/The person rejected this call; it did not run\./g, "Rejected; it did not run."],
  [/ Do not send it again as is\./g, ""],
  [/ Use the earlier result, change the arguments, or try a different approach\./g, ""],
  [/ Send the call again with complete arguments; if it carries a lot of content, split it into smaller calls\./g, ""],
  [/: call retrieve_tool_result with \{[^}\n]*\} \(or a line range or pattern\) to read the omitted part\./g, "."],
  [/ Call shell with \{"session_id":"[^"\n]+"\} for more output and the exit code, or add "kill": true to stop it\./g, ""],
];

export function forPerson(modelText: string): string {
  let text = modelText;
  for (const [re, shown] of MODEL_ONLY) text = text.replace(re, shown);
  return text;
}
