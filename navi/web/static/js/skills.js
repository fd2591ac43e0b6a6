// The Skills panel: a modal dialog with the user's Agent Skills (GET /skills): each with its
// description, where it comes from, a switch to turn it on or off (PATCH /skills/{name}), a button
// showing its SKILL.md (GET /skills/{name}) and, for the user's own, one removing it after a confirm
// (DELETE /skills/{name}); a zip installs (POST /skills, the zip as the body), and the skills that
// failed to load are listed with their file and line. Below them, the user's browser sign-ins
// (GET /browser/profiles, made with `navi browser login`), each with the sites it keeps cookies
// for, forgotten after a confirm (DELETE /browser/profiles/{name}), and signing in to a new one in
// Navi's own browser from here (viewer.js). Names, descriptions, SKILL.md
// and sites are the server's text: set as text only.

import { api } from "./api.js";
import { confirmDialog } from "./confirm.js";
import { el } from "./dom.js";
import { icon } from "./icons.js";
import { SigninViewer } from "./viewer.js";

const plural = (n, one) => `${n} ${one}${n === 1 ? "" : "s"}`;

export class SkillsPanel {
  constructor({ dialog, openButton, closeButton }) {
    this.dialog = dialog;
    this.opener = openButton;
    const $ = (id) => dialog.querySelector(`#${id}`);
    this.status = $("skills-status");
    this.list = $("skill-list");
    this.empty = $("skill-empty");
    this.problems = $("skill-problems");
    this.view = $("skill-view");
    this.viewHeading = $("skill-view-heading");
    this.text = $("skill-md");
    this.input = $("skills-input");
    this.signins = $("signin-list");
    this.signinEmpty = $("signin-empty");
    this.viewer = new SigninViewer({ root: dialog, say: (m, k) => this.say(m, k), onSaved: () => this.loadSignins() });
    dialog.addEventListener("close", () => this.viewer.stop());
    this.skills = [];
    this.shown = null; // the name of the skill whose SKILL.md is shown
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => { if (this.opener.isConnected) this.opener.focus(); });
    this.input.addEventListener("change", () => {
      const file = this.input.files[0];
      this.input.value = "";
      if (file) this.install(file);
    });
  }

  async open() {
    this.say("");
    if (!this.dialog.open) this.dialog.showModal();
    this.dialog.querySelector("#close-skills").focus();
    await this.load();
  }

  say(message, kind = "info") {
    this.status.textContent = message;
    this.status.className = `panel-status ${kind}`;
    this.status.hidden = !message;
  }

  async load() {
    let data;
    try {
      data = await api.skills();
    } catch (error) {
      this.say(`Could not read your skills: ${error.message}`, "error");
      return;
    }
    this.skills = data.skills;
    this.render(data.problems);
    if (this.shown && !this.skills.some((s) => s.name === this.shown)) this.hideView();
    await this.loadSignins();
  }

  async loadSignins() {
    let data;
    try {
      data = await api.browserProfiles();
    } catch (error) {
      this.say(`Could not read your browser sign-ins: ${error.message}`, "error");
      return;
    }
    this.signinEmpty.hidden = data.profiles.length > 0;
    this.signins.replaceChildren(...data.profiles.map((p) => el("li", { class: "collection", dataset: { name: p.name } },
      el("span", { class: "collection-open" },
        el("span", { class: "collection-name", text: p.name }),
        el("span", { class: "collection-meta", text: p.sites.join(", ") || "no cookies" })),
      el("button", { type: "button", class: "icon-button", "aria-label": `Forget sign-in ${p.name}`, title: "Forget",
        onclick: () => this.forget(p.name) }, icon("trash")))));
  }

  async forget(name) {
    const ok = await confirmDialog({
      title: `Forget ${name}?`,
      message: "Its cookies are deleted: the browser tool can no longer open those sites signed in as you.",
      confirm: "Forget",
    });
    if (!ok) return;
    try {
      await api.forgetBrowserProfile(name);
      this.say(`Forgot ${name}.`);
    } catch (error) {
      this.say(`Could not forget ${name}: ${error.message}`, "error");
    }
    await this.loadSignins();
  }

  render(problems) {
    this.empty.hidden = this.skills.length > 0;
    this.list.replaceChildren(...this.skills.map((s) => {
      const own = s.source === "own";
      const meta = [own ? "yours" : `from ${s.source}`, s.files.length ? plural(s.files.length, "file") : "", s.license]
        .filter(Boolean).join(" · ");
      const show = el("button", { type: "button", class: "collection-open", "aria-pressed": s.name === this.shown ? "true" : "false",
        title: "Show its SKILL.md", onclick: () => this.show(s.name) },
        el("span", { class: "collection-name", text: s.name }),
        el("span", { class: "collection-meta", text: s.description }),
        el("span", { class: "collection-meta", text: meta }));
      const toggle = el("input", { type: "checkbox", checked: s.enabled, onchange: (event) => this.setEnabled(s, event.target.checked) });
      toggle.setAttribute("aria-label", `Offer ${s.name} to Navi`);
      const use = el("label", { class: "collection-use", title: "Navi sees the skill's name and description, and reads it when a task matches" },
        toggle, " On");
      const remove = own
        ? el("button", { type: "button", class: "icon-button", "aria-label": `Remove skill ${s.name}`, title: "Remove",
          onclick: () => this.remove(s) }, icon("trash"))
        : null;
      return el("li", { class: `collection skill${s.enabled ? " attached" : ""}${s.name === this.shown ? " chosen" : ""}`,
        dataset: { name: s.name } }, show, use, remove);
    }));
    this.problems.hidden = !problems.length;
    this.problems.replaceChildren(...problems.map((p) =>
      el("li", { text: `${p.file}${p.line ? `:${p.line}` : ""}: ${p.message}` })));
  }

  async show(name) {
    let skill;
    try {
      skill = await api.skill(name);
    } catch (error) {
      this.say(`Could not read ${name}: ${error.message}`, "error");
      return;
    }
    this.shown = name;
    this.viewHeading.textContent = `${name}: SKILL.md`;
    this.text.textContent = skill.skill_md;
    this.view.hidden = false;
    for (const li of this.list.children) {
      const chosen = li.dataset.name === name;
      li.classList.toggle("chosen", chosen);
      li.querySelector(".collection-open")?.setAttribute("aria-pressed", chosen ? "true" : "false");
    }
  }

  hideView() {
    this.shown = null;
    this.view.hidden = true;
    this.text.textContent = "";
  }

  async setEnabled(skill, enabled) {
    try {
      await api.setSkill(skill.name, enabled);
      this.say(`${skill.name} is ${enabled ? "on" : "off"}.`);
    } catch (error) {
      this.say(`Could not change ${skill.name}: ${error.message}`, "error");
    }
    await this.load();
  }

  async remove(skill) {
    const ok = await confirmDialog({
      title: `Remove ${skill.name}?`,
      message: "Its folder, with its instructions and scripts, is deleted.",
      confirm: "Remove",
    });
    if (!ok) return;
    try {
      await api.removeSkill(skill.name);
      this.say(`Removed ${skill.name}.`);
    } catch (error) {
      this.say(`Could not remove ${skill.name}: ${error.message}`, "error");
    }
    await this.load();
  }

  async install(file) {
    this.say(`Installing ${file.name}…`);
    let done;
    try {
      done = await api.installSkill(file);
    } catch (error) {
      this.say(`${file.name} was not installed: ${error.message}`, "error");
      return;
    }
    const names = done.installed.map((s) => s.name).join(", ");
    const trouble = done.problems.length ? ` ${plural(done.problems.length, "skill")} could not be installed (listed below).` : "";
    this.say(`Installed ${names}.${trouble}`, done.problems.length ? "error" : "info");
    await this.load();
    if (done.problems.length) {
      this.problems.hidden = false;
      this.problems.append(...done.problems.map((p) => el("li", { text: `${p.file}${p.line ? `:${p.line}` : ""}: ${p.message}` })));
    }
  }
}
