// Benchmark helpers: timing (measure.ts) and result tables with ratios and goals (table.ts).
export * from "./measure";
export * from "./table";
