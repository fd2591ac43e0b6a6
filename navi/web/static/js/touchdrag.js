// Drag and drop with a finger. Touch screens fire no HTML drag events, so rows are picked up with
// pointer events instead: a press held still for LONG_PRESS ms lifts the row (a swipe before that
// scrolls the list as usual), a copy of it follows the finger, the target under the finger is
// marked, and lifting the finger drops the row there. While a row is lifted the page does not
// scroll and the long press opens no menu; the click that ends a drag (where the finger lifted)
// opens nothing, while a tap elsewhere right after it does what it says.

import { el } from "./dom.js";

const LONG_PRESS = 450; // ms the finger stays still to lift a row
const SLOP = 10; // px the finger may drift during the press (more: it is a scroll)

// `root`: where the rows are; `rows`: a selector for them (each with `data-id`); `targetAt(x, y)`:
// the drop target under a point, or null; `onDrop(id, target)`: the row was dropped there.
export function touchDrag({ root, rows, targetAt, onDrop }) {
  let press = null; // { row, id, x, y, pointerId, timer, lifted, ghost, over }
  let swallowClick = null; // where the last drop was, for 400 ms

  const mark = (target) => {
    if (press.over === target) return;
    press.over?.classList.remove("drop-here");
    press.over = target;
    target?.classList.add("drop-here");
  };

  const end = () => {
    if (!press) return;
    clearTimeout(press.timer);
    press.ghost?.remove();
    press.row.classList.remove("lifted");
    press.over?.classList.remove("drop-here");
    document.body.classList.remove("touch-dragging");
    press = null;
  };

  const follow = (x, y) => {
    const box = press.row.getBoundingClientRect();
    press.ghost.style.transform = `translate(${x - press.dx}px, ${y - box.height / 2}px)`;
    mark(targetAt(x, y));
  };

  const lift = () => {
    const { row } = press;
    const box = row.getBoundingClientRect();
    press.lifted = true;
    press.dx = press.x - box.left;
    press.ghost = el("div", { class: "drag-ghost", "aria-hidden": "true" }, row.querySelector(".session-name")?.cloneNode(true));
    press.ghost.style.width = `${box.width}px`;
    document.body.append(press.ghost);
    row.classList.add("lifted");
    document.body.classList.add("touch-dragging");
    navigator.vibrate?.(15);
    follow(press.x, press.y);
  };

  root.addEventListener("pointerdown", (event) => {
    if (event.pointerType !== "touch" || !event.isPrimary) return;
    const row = event.target.closest?.(rows);
    if (!row || event.target.closest("input, .row-more")) return;
    end();
    press = { row, id: row.dataset.id, x: event.clientX, y: event.clientY, pointerId: event.pointerId, lifted: false };
    press.timer = setTimeout(() => { if (press?.row === row) lift(); }, LONG_PRESS);
  });
  root.addEventListener("pointermove", (event) => {
    if (!press || event.pointerId !== press.pointerId) return;
    if (press.lifted) {
      event.preventDefault();
      follow(event.clientX, event.clientY);
    } else if (Math.hypot(event.clientX - press.x, event.clientY - press.y) > SLOP) {
      end(); // a scroll or a swipe, not a press
    }
  });
  root.addEventListener("pointerup", (event) => {
    if (!press || event.pointerId !== press.pointerId) return;
    if (press.lifted) {
      const { id } = press;
      const target = targetAt(event.clientX, event.clientY);
      // The click the lifted finger makes lands where it was lifted: that one opens nothing. A tap
      // elsewhere right after (the next control) is the user's own and goes through.
      swallowClick = { x: event.clientX, y: event.clientY };
      setTimeout(() => { swallowClick = null; }, 400);
      end();
      if (target) onDrop(id, target);
    } else {
      end();
    }
  });
  root.addEventListener("pointercancel", end);
  // Once a row is lifted the finger moves it, not the page.
  root.addEventListener("touchmove", (event) => { if (press?.lifted) event.preventDefault(); }, { passive: false });
  root.addEventListener("contextmenu", (event) => { if (press) event.preventDefault(); });
  root.addEventListener("click", (event) => {
    if (!swallowClick || Math.hypot(event.clientX - swallowClick.x, event.clientY - swallowClick.y) > SLOP) return;
    swallowClick = null;
    event.preventDefault();
    event.stopPropagation();
  }, true);
}
