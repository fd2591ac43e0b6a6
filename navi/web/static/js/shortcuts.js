// The page's keyboard shortcuts, and the "?" dialog that lists them. Ctrl stands for ⌘ on a Mac.
// Single keys (/ and ?) act only while the person is not typing in a box.

const TYPING = new Set(["INPUT", "TEXTAREA", "SELECT"]);

function typing(target) {
  return TYPING.has(target?.tagName) || Boolean(target?.isContentEditable);
}

export function installShortcuts({ dialog, openButton, closeButton, newConversation, search, focusInput }) {
  const show = () => {
    if (!dialog.open) dialog.showModal();
  };
  openButton.addEventListener("click", show);
  closeButton.addEventListener("click", () => dialog.close());
  document.addEventListener("keydown", (event) => {
    const ctrl = event.ctrlKey || event.metaKey;
    const key = event.key.toLowerCase();
    const modal = document.querySelector("dialog[open]");
    if (ctrl && event.shiftKey && key === "o") {
      event.preventDefault();
      modal?.close();
      newConversation();
    } else if (ctrl && !event.shiftKey && key === "k") {
      event.preventDefault();
      modal?.close();
      search();
    } else if (event.shiftKey && event.key === "Escape") {
      event.preventDefault();
      focusInput();
    } else if (ctrl && key === "/") {
      event.preventDefault();
      show();
    } else if (!ctrl && !event.altKey && !typing(event.target) && !modal) {
      if (event.key === "?") {
        event.preventDefault();
        show();
      } else if (event.key === "/") {
        event.preventDefault();
        focusInput();
      }
    }
  });
}
