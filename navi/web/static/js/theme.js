// Applies the theme chosen in Settings before the page is drawn: a plain script in <head>, since a
// module would run after the first paint and the page would flash in the other theme. No choice
// (or "system") leaves it to the browser's prefers-color-scheme.
(function applyTheme() {
  let theme = null;
  try {
    theme = localStorage.getItem("navi.theme");
  } catch (error) { /* storage blocked: the system's theme */ }
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
})();
