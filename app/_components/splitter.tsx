"use client";
// A drag handle between two panes. It reports the new size of the pane it resizes; the caller
// clamps and stores it. Keyboard: arrow keys move it by 16 px, as a focusable separator.
import { useRef } from "react";

interface Props {
  /** "x": a vertical bar resizing a width; "y": a horizontal bar resizing a height. */
  axis: "x" | "y";
  size: number;
  /** +1 when dragging right/down grows the pane, -1 when it shrinks it. */
  direction: 1 | -1;
  min: number;
  max: number;
  onResize(size: number): void;
  label: string;
  className?: string;
  testId?: string;
}

export function Splitter({ axis, size, direction, min, max, onResize, label, className, testId }: Props) {
  const start = useRef<{ pos: number; size: number } | null>(null);
  const clamp = (v: number) => Math.round(Math.min(max, Math.max(min, v)));
  return (
    <div
      role="separator"
      aria-label={label}
      aria-orientation={axis === "x" ? "vertical" : "horizontal"}
      aria-valuenow={size}
      aria-valuemin={min}
      aria-valuemax={max}
      tabIndex={0}
      className={className}
      data-testid={testId}
      onPointerDown={(e) => {
        e.currentTarget.setPointerCapture(e.pointerId);
        start.current = { pos: axis === "x" ? e.clientX : e.clientY, size };
      }}
      onPointerMove={(e) => {
        if (!start.current) return;
        const delta = (axis === "x" ? e.clientX : e.clientY) - start.current.pos;
        onResize(clamp(start.current.size + direction * delta));
      }}
      onPointerUp={() => (start.current = null)}
      onPointerCancel={() => (start.current = null)}
      onKeyDown={(e) => {
        const step =
          e.key === "ArrowLeft" || e.key === "ArrowUp" ? -16 : e.key === "ArrowRight" || e.key === "ArrowDown" ? 16 : 0;
        if (!step) return;
        e.preventDefault();
        onResize(clamp(size + direction * step));
      }}
    />
  );
}
