// Conversations in and out of the page: Import takes a ChatGPT or Claude export (the .zip the
// service sends, or its conversations.json) or a Navi archive, whichever it is; a conversation's
// menu exports it as Markdown, PDF or the JSON archive Navi imports again.

import { api } from "./api.js";
import { el, toast } from "./dom.js";

export const FORMATS = [
  { format: "markdown", label: "Export as Markdown", extension: "md" },
  { format: "pdf", label: "Export as PDF", extension: "pdf" },
  { format: "json", label: "Export archive (JSON)", extension: "json" },
];

const SOURCES = { chatgpt: "ChatGPT", claude: "Claude", navi: "a Navi archive" };

export function download(filename, blob) {
  const url = URL.createObjectURL(blob);
  const link = el("a", { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// The file name Navi gave the export (Content-Disposition), else one made from the title.
function nameOf(response, title, id, extension) {
  const given = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "")?.[1];
  if (given) return given;
  const safe = title.replace(/[^\w.-]+/g, "-").slice(0, 60) || "session";
  return `navi-${safe}-${id.slice(0, 8)}.${extension}`;
}

export async function exportSession(session, title, format = "json") {
  const kind = FORMATS.find((f) => f.format === format) || FORMATS[2];
  try {
    const response = await api.exportRaw(session.id, kind.format);
    download(nameOf(response, title, session.id, kind.extension), await response.blob());
    toast("Exported.", "info");
  } catch (error) {
    toast(`Could not export: ${error.message}`);
  }
}

// The Import button's file, sent as it is; what was imported is said in one line.
export async function importFile(file) {
  try {
    const done = await api.importFile(file);
    const count = done.imported.length;
    const from = SOURCES[done.source] || "the file";
    const again = done.skipped ? `; ${done.skipped} were imported before` : "";
    toast(`Imported ${count} conversation${count === 1 ? "" : "s"} from ${from}${again}.`, "info");
    return done;
  } catch (error) {
    toast(`Could not import ${file.name}: ${error.message}`);
    return null;
  }
}
