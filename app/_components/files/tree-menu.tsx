"use client";
// The file tree's context menu (right click, Shift+F10 or the Menu key): the actions on the
// row it was opened on, with their keys shown as VS Code's explorer does. It takes the
// keyboard while open (Up/Down/Home/End, Enter, Escape) and closes on any click outside.
import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import styles from "./files.module.css";

export interface MenuItem {
  label: string;
  keys?: string;
  run(): void;
}

interface Props {
  x: number;
  y: number;
  items: MenuItem[];
  onClose(): void;
}

export function TreeMenu({ x, y, items, onClose }: Props) {
  const menu = useRef<HTMLUListElement>(null);
  const [active, setActive] = useState(0);
  useEffect(() => {
    menu.current?.focus();
    const outside = (e: PointerEvent) => {
      if (!menu.current?.contains(e.target as Node)) onClose();
    };
    window.addEventListener("pointerdown", outside, true);
    window.addEventListener("blur", onClose);
    return () => {
      window.removeEventListener("pointerdown", outside, true);
      window.removeEventListener("blur", onClose);
    };
  }, [onClose]);
  // Kept inside the window: a menu opened near the bottom or right edge opens up or left.
  const [place, setPlace] = useState({ left: x, top: y });
  useEffect(() => {
    const r = menu.current?.getBoundingClientRect();
    if (!r) return;
    setPlace({
      left: Math.max(0, Math.min(x, window.innerWidth - r.width - 4)),
      top: Math.max(0, Math.min(y, window.innerHeight - r.height - 4)),
    });
  }, [x, y]);

  const choose = (item: MenuItem) => {
    onClose();
    item.run();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    e.stopPropagation();
    const last = items.length - 1;
    const move: Record<string, number | undefined> = {
      ArrowDown: active === last ? 0 : active + 1,
      ArrowUp: active === 0 ? last : active - 1,
      Home: 0,
      End: last,
    };
    if (move[e.key] !== undefined) setActive(move[e.key]!);
    else if (e.key === "Enter" || e.key === " ") choose(items[active]);
    else if (e.key === "Escape" || e.key === "Tab") onClose();
    else return;
    e.preventDefault();
  };

  return (
    <ul
      ref={menu}
      role="menu"
      aria-label="File actions"
      tabIndex={-1}
      className={styles.menu}
      style={place}
      onKeyDown={onKeyDown}
      data-testid="tree-menu"
    >
      {items.map((item, i) => (
        <li
          key={item.label}
          role="menuitem"
          className={i === active ? styles.menuActive : undefined}
          onPointerEnter={() => setActive(i)}
          onClick={() => choose(item)}
        >
          <span>{item.label}</span>
          {item.keys && <kbd>{item.keys}</kbd>}
        </li>
      ))}
    </ul>
  );
}
