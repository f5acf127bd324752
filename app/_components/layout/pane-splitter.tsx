"use client";
// A pane's resize handle: one control for every pane, told which pane it sizes; the axis, the
// size, the direction (the side bar grows rightwards, the others leftwards or upwards) and the
// bounds all follow from the pane and the layout. Not drawn while its pane is not on screen.
import { Splitter } from "../splitter";
import { MIN } from "./pane-layout";
import type { IdeLayout, Pane } from "./use-ide-layout";

interface Props {
  layout: IdeLayout;
  pane: Pane;
  label: string;
  className: string;
  testId: string;
}

export function PaneSplitter({ layout, pane, label, className, testId }: Props) {
  const { fitted } = layout;
  if (!fitted.shown[pane]) return null;
  return (
    <Splitter
      axis={pane === "panel" ? "y" : "x"}
      size={fitted[pane]}
      direction={pane === "side" ? 1 : -1}
      min={MIN[pane]}
      max={layout.maxOf(pane)}
      label={label}
      className={className}
      onResize={(n) => layout.resize(pane, n)}
      testId={testId}
    />
  );
}
