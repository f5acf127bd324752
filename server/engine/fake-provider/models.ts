// The fake provider's model list, in both wire formats at `GET /v1/models`: Anthropic's (told
// apart by its anthropic-version header: { data: [{ type: "model", id, display_name,
// capabilities }], has_more, first_id, last_id }) and OpenAI's ({ object: "list", data: [{ id,
// object: "model", owned_by }] }, with OpenRouter's architecture.input_modalities when a model
// says whether it takes images). A test may make the list fail with an HTTP status.
import type { IncomingMessage } from "node:http";
import { z } from "zod";
import { errorBody } from "./wire";

export const FakeModel = z.object({
  id: z.string().min(1),
  /** Anthropic's display_name (default: the id). */
  name: z.string().optional(),
  /** Said in the list's metadata when set; left out otherwise (the server then goes by the name). */
  images: z.boolean().optional(),
});
export type FakeModel = z.infer<typeof FakeModel>;

/** What `GET /v1/models` answers: a list, or a failure with this status. */
export const FakeModelList = z.union([
  z.array(FakeModel),
  z.object({ status: z.number().int().min(400).max(599), message: z.string().default("scripted failure") }),
]);
export type FakeModelList = z.infer<typeof FakeModelList>;

export const DEFAULT_FAKE_MODELS: FakeModel[] = [
  { id: "fake-model", name: "Fake Model", images: true },
  { id: "fake-model-text", name: "Fake Model (text only)", images: false },
];

const CREATED = Date.UTC(2026, 0, 1) / 1000;

export function isAnthropicRequest(req: IncomingMessage): boolean {
  return req.headers["anthropic-version"] !== undefined;
}

export function modelsResponse(anthropic: boolean, list: FakeModelList): { status: number; body: string } {
  const format = anthropic ? "anthropic" : "openai";
  if (!Array.isArray(list))
    return { status: list.status, body: errorBody(format, list.status, undefined, list.message) };
  if (anthropic) {
    const data = list.map((m) => ({
      type: "model",
      id: m.id,
      display_name: m.name ?? m.id,
      created_at: new Date(CREATED * 1000).toISOString(),
      capabilities: m.images === undefined ? null : { image_input: { supported: m.images } },
    }));
    return {
      status: 200,
      body: JSON.stringify({ data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }),
    };
  }
  const data = list.map((m) => ({
    id: m.id,
    object: "model",
    created: CREATED,
    owned_by: "fake-provider",
    ...(m.images === undefined ? {} : { architecture: { input_modalities: m.images ? ["text", "image"] : ["text"] } }),
  }));
  return { status: 200, body: JSON.stringify({ object: "list", data }) };
}
