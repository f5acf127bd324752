// The engine: model turns from "the user sent a message" to "the turn ended".
export {
  createEngine,
  defaultSystemPrompt,
  EngineError,
  type Engine,
  type EngineDeps,
  type SendResult,
} from "./engine";
export {
  resolveProvider,
  notConfiguredMessage,
  defaultModels,
  modelChoices,
  type ModelChoices,
} from "./providers/index";
export type { ToolCatalog, ToolDefinition, StreamEvent, ContentBlock, ProviderConfig } from "./types";
