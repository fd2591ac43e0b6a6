// What a person sets for themselves (issue 49, items 13 and 14): custom instructions, the model each
// built-in profile uses for them (PUT /agents/profiles/{id}/model) and profiles of their own in
// Settings (GET/PUT /agents/instructions, POST/PUT/DELETE /agents/profiles), and a
// conversation's own model and instructions (PATCH /sessions/{id}: `model`, `system_prompt`) in the
// dialog opened beside the conversation's title. The models to pick from come from `modelChoices`
// (GET /models?check=false: its `choices`, what the model servers list), read once per opening.

import { api } from "./api.js";
import { el } from "./dom.js";

// Tools a new profile starts with (each can be unticked).
const STARTER_TOOLS = ["todo", "web_search", "web_view", "memory_search", "recall", "get_current_datetime"];

export async function modelChoices() {
  try {
    return (await api.models({ check: false })).choices; // the pickers need no endpoint states
  } catch (error) {
    return []; // no list: only "the default" to pick
  }
}

// Fill a <select> with "" (the default, named by `defaultLabel`) and the models, `chosen` selected
// (a choice the servers no longer list stays, so saving does not change it unasked).
export function fillModels(select, choices, chosen, defaultLabel) {
  const options = [el("option", { value: "", text: defaultLabel })];
  for (const c of choices) options.push(el("option", { value: c.id, text: `${c.model} (${c.backend})` }));
  if (chosen && !choices.some((c) => c.id === chosen)) options.push(el("option", { value: chosen, text: chosen }));
  select.replaceChildren(...options);
  select.value = chosen || "";
}

function showError(node, message) {
  node.textContent = message;
  node.hidden = !message;
}

// Settings: "About me" and "How to answer".
export class InstructionsForm {
  constructor({ form, say }) {
    this.form = form;
    this.say = say;
    this.typed = false; // typed into since the panel opened: what was read must not overwrite it
    form.addEventListener("input", () => { this.typed = true; });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.save();
    });
  }

  async load() {
    this.typed = false;
    try {
      const mine = await api.instructions();
      if (this.typed) return;
      this.form.elements.about_me.value = mine.about_me;
      this.form.elements.how_to_answer.value = mine.how_to_answer;
    } catch (error) {
      this.say(`Could not load your instructions: ${error.message}`, "error");
    }
  }

  async save() {
    const f = this.form.elements;
    try {
      await api.setInstructions({ about_me: f.about_me.value, how_to_answer: f.how_to_answer.value });
      this.say("Instructions saved: they apply from the next message on.");
    } catch (error) {
      this.say(`Could not save them: ${error.message}`, "error");
    }
  }
}

// Settings: a model picker for each built-in profile, this user's pick selected ("" : its own model).
export class BuiltinModels {
  constructor({ list, say, onChanged }) {
    this.list = list;
    this.say = say;
    this.onChanged = onChanged; // () → the page reads the profiles again (the header names the model)
  }

  async load() {
    let profiles;
    let choices;
    try {
      [profiles, choices] = await Promise.all([api.profiles(), modelChoices()]);
    } catch (error) {
      this.say(`Could not load the profiles: ${error.message}`, "error");
      return;
    }
    this.list.replaceChildren(...profiles.filter((p) => !p.custom).map((p) => {
      const id = `builtin-model-${p.id}`;
      const select = el("select", { id, name: p.id, dataset: { profile: p.id } });
      fillModels(select, choices, p.model_choice || "", `Its own (${p.default_model || "Navi's default"})`);
      select.addEventListener("change", () => this.pick(p, select));
      return el("li", {}, el("label", { for: id, text: p.name }), select);
    }));
  }

  async pick(profile, select) {
    select.disabled = true;
    try {
      const saved = await api.pickModel(profile.id, select.value);
      this.say(select.value
        ? `${profile.name} answers you with ${saved.model} from the next message on.`
        : `${profile.name} answers you with its own model (${saved.model}) again.`);
      this.onChanged();
    } catch (error) {
      this.say(`Could not pick the model: ${error.message}`, "error");
    } finally {
      select.disabled = false;
    }
  }
}

// Settings: the user's own profiles, listed with Edit and Delete, and the form that makes or edits one.
export class ProfileEditor {
  constructor({ root, say, onChanged }) {
    this.list = root.querySelector("#custom-profile-list");
    this.form = root.querySelector("#profile-form");
    this.title = root.querySelector("#profile-form-title");
    this.tools = root.querySelector("#profile-tools");
    this.error = root.querySelector("#profile-error");
    this.newButton = root.querySelector("#new-profile");
    this.say = say;
    this.onChanged = onChanged; // () → the page reads the profiles again
    this.editing = null; // the id of the profile in the form (null: a new one)
    this.newButton.addEventListener("click", () => this.edit(null));
    root.querySelector("#profile-cancel").addEventListener("click", () => this.closeForm());
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.save();
    });
  }

  async load() {
    try {
      this.profiles = (await api.profiles()).filter((p) => p.custom);
    } catch (error) {
      this.say(`Could not load your profiles: ${error.message}`, "error");
      return;
    }
    this.list.replaceChildren(...this.profiles.map((p) => el("li", { class: "remembered-item", dataset: { profile: p.id } },
      el("span", { class: "remembered-what" }, el("strong", { text: p.name }),
        el("span", { class: "note", text: ` · ${p.model} · ${p.tools.length} tools` })),
      el("span", { class: "row-buttons" },
        el("button", { type: "button", class: "outline small", "aria-label": `Edit ${p.name}`, onclick: () => this.edit(p) }, "Edit"),
        el("button", { type: "button", class: "outline small", "aria-label": `Delete ${p.name}`, onclick: () => this.remove(p) }, "Delete")))));
  }

  async edit(profile) {
    this.editing = profile?.id || null;
    this.title.textContent = profile ? `Edit ${profile.name}` : "New profile";
    const f = this.form.elements;
    f.name.value = profile?.name || "";
    f.instructions.value = profile?.instructions || "";
    showError(this.error, "");
    const [choices, tools, signIns] = await Promise.all([modelChoices(), api.tools().catch(() => []),
      api.browserProfiles().then((d) => d.profiles.map((p) => p.name)).catch(() => [])]);
    fillModels(f.model, choices, profile?.model_choice || "", "Navi's default model");
    // The browser sign-in its conversations open pages with: one of this user's saved ones.
    const chosen = profile?.browser_profile || "";
    const names = chosen && !signIns.includes(chosen) ? [...signIns, chosen] : signIns;
    f.browser_profile.replaceChildren(el("option", { value: "" }, "None (signed out)"),
      ...names.map((n) => el("option", { value: n, selected: n === chosen }, n)));
    const ticked = new Set(profile ? profile.tools : STARTER_TOOLS);
    this.tools.replaceChildren(...tools.map((t) => el("label", { title: t.description },
      el("input", { type: "checkbox", name: "tool", value: t.name, checked: ticked.has(t.name) }), ` ${t.name}`)));
    this.form.hidden = false;
    this.newButton.hidden = true;
    f.name.focus();
  }

  closeForm() {
    this.form.hidden = true;
    this.newButton.hidden = false;
    this.editing = null;
  }

  async save() {
    const f = this.form.elements;
    const spec = {
      name: f.name.value.trim(),
      instructions: f.instructions.value,
      model: f.model.value,
      browser_profile: f.browser_profile.value,
      tools: [...this.tools.querySelectorAll('input[name="tool"]:checked')].map((box) => box.value),
    };
    if (!spec.name) return showError(this.error, "Give the profile a name.");
    try {
      const saved = this.editing ? await api.updateProfile(this.editing, spec) : await api.createProfile(spec);
      this.say(`Profile ${saved.name} saved: pick it beside a conversation's title.`);
    } catch (error) {
      return showError(this.error, error.message);
    }
    this.closeForm();
    await this.load();
    this.onChanged();
  }

  async remove(profile) {
    try {
      await api.deleteProfile(profile.id);
      this.say(`Profile ${profile.name} deleted: its conversations go on in the default profile.`);
    } catch (error) {
      this.say(`Could not delete it: ${error.message}`, "error");
    }
    await this.load();
    this.onChanged();
    this.newButton.focus();
  }
}

// The dialog beside the title: this conversation's model and its own instructions.
export class ConversationOptions {
  constructor({ dialog, openButton, closeButton, currentSession, defaultModel, onSaved }) {
    this.dialog = dialog;
    this.opener = openButton;
    this.form = dialog.querySelector("form");
    this.error = dialog.querySelector("#conversation-options-error");
    this.currentSession = currentSession; // () → the open session (with `model`, `system_prompt`)
    this.defaultModel = defaultModel; // () → the profile's model, named in the "default" option
    this.onSaved = onSaved; // (updated session fields) → the page shows them
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => this.opener.focus());
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.save();
    });
  }

  // Shown for a conversation (a draft has nothing to set yet).
  setSession(session) {
    this.opener.hidden = !session;
  }

  async open() {
    const session = this.currentSession();
    if (!session) return;
    showError(this.error, "");
    const f = this.form.elements;
    f.system_prompt.value = session.system_prompt || "";
    fillModels(f.model, await modelChoices(), session.model || "", `The profile's model (${this.defaultModel() || "default"})`);
    if (!this.dialog.open) this.dialog.showModal();
    f.model.focus();
  }

  async save() {
    const session = this.currentSession();
    if (!session) return;
    const f = this.form.elements;
    const body = { model: f.model.value, system_prompt: f.system_prompt.value };
    try {
      await api.setOptions(session.id, body);
    } catch (error) {
      return showError(this.error, error.message);
    }
    this.onSaved({ model: body.model || null, system_prompt: body.system_prompt.trim() || null });
    this.dialog.close();
  }
}
