// Which edit tools a session's model is offered, as opencode does: models of OpenAI's GPT family
// are trained on apply_patch's diff form and get it instead of edit_file/write_file; Claude and
// every other model get edit_file/write_file instead of apply_patch. Chosen once per session
// from the model of its first request and kept when the model is switched, so the catalog (the
// cached prompt prefix) never changes under a session (server/tools/sessions.ts).

export type EditTools = "patch" | "replace";

/** The tools each choice leaves out of what the session's model is offered. A call of one
 *  (a conversation begun with another model) still runs, under the same checks. */
export const HIDDEN_BY: Readonly<Record<EditTools, ReadonlySet<string>>> = {
  patch: new Set(["edit_file", "write_file"]),
  replace: new Set(["apply_patch"]),
};

// The model id's last segment (a router's "openai/gpt-5" is gpt-5), lower-cased: gpt-* except the
// open-weight gpt-oss and the pre-tools gpt-3.5, chatgpt-*, the o1/o3/o4 reasoning models, and
// anything named codex.
const GPT_FAMILY = /^(?:gpt-(?!oss|3\.5)|chatgpt-|o[134](?:-|$))|codex/;

export function editToolsFor(model: string | null | undefined): EditTools {
  const id = (model ?? "").trim().toLowerCase().split("/").pop() ?? "";
  return GPT_FAMILY.test(id) ? "patch" : "replace";
}
