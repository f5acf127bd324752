// The hub: per-session event fan-out with sequence numbers (events.ts).
export { createEventHub, type EventHub, type EventHubOptions } from "./events";
