"use client";
// Read-only mode: true on a session opened through a share link. The IDE frame provides it;
// components that change things (composer, approvals, file tree actions, editor) hide them.
import { createContext, useContext } from "react";

export const ReadOnlyContext = createContext(false);

export const useReadOnly = (): boolean => useContext(ReadOnlyContext);
