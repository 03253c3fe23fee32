// Mode and config option selectors, shown only when the agent offers them
// (session/new or session/load results, then current_mode_update and
// config_option_update). A change asks the host; the selector shows what the
// agent reports, so a refused change reverts on the next update.
//
// One selector per thing: an agent may offer its modes both ways during ACP's
// move from modes to config options (a config option of category "mode", or
// of id "mode", beside the `modes` field). Config options supersede modes
// ("If an Agent provides configOptions, Clients SHOULD use them instead of
// the modes field", ACP's Session Config Options), so that option is the one
// mode selector, and the modes selector is not drawn while it is there.
import type { SessionConfigOption, SessionConfigSelectGroup, SessionConfigSelectOption, SessionModeState } from "@agentclientprotocol/sdk";
import type { SessionViewHost } from "./api.ts";
import { el } from "./dom.ts";

export class Selectors {
  readonly element: HTMLElement;
  private readonly modeBox: HTMLElement;
  private readonly configBox: HTMLElement;
  private modeSelect: HTMLSelectElement | undefined;
  private modes: SessionModeState | null = null;
  /** A config option that stands for the modes, while the agent offers one. */
  private modeOption: SessionConfigOption | undefined;

  private readonly host: SessionViewHost;

  constructor(host: SessionViewHost) {
    this.host = host;
    this.modeBox = el("div", { class: "sv-selectors-modes" });
    this.configBox = el("div", { class: "sv-selectors-config" });
    this.element = el("div", { class: "sv-selectors", role: "group", "aria-label": "Session settings" }, this.modeBox, this.configBox);
  }

  setModes(modes: SessionModeState | null): void {
    this.modes = modes;
    this.drawModes();
  }

  private drawModes(): void {
    const modes = this.modes;
    this.modeSelect = undefined;
    if (!modes || modes.availableModes.length === 0 || this.modeOption !== undefined) return this.modeBox.replaceChildren();
    const select = el("select", { class: "sv-mode", "aria-label": "Mode" });
    for (const mode of modes.availableModes) select.append(el("option", { value: mode.id, title: mode.description ?? undefined }, mode.name));
    select.value = modes.currentModeId;
    select.addEventListener("change", () => this.host.setMode(select.value));
    this.modeSelect = select;
    this.modeBox.replaceChildren(el("label", { class: "sv-field" }, el("span", {}, "Mode"), select));
  }

  currentMode(modeId: string): void {
    if (this.modeSelect) this.modeSelect.value = modeId;
  }

  setConfigOptions(options: SessionConfigOption[]): void {
    const hadModeOption = this.modeOption !== undefined;
    this.modeOption = options.find((option) => option.category === "mode" || option.id === "mode");
    this.configBox.replaceChildren(...options.map((option) => this.field(option)));
    if (hadModeOption !== (this.modeOption !== undefined)) this.drawModes();
  }

  private field(option: SessionConfigOption): HTMLElement {
    if (option.type === "boolean") {
      const box = el("input", { type: "checkbox", class: "sv-config", "data-config-id": option.id });
      box.checked = option.currentValue;
      box.addEventListener("change", () => this.host.setConfigOption(option.id, box.checked));
      return el("label", { class: "sv-field", title: option.description ?? undefined }, box, el("span", {}, option.name));
    }
    const select = el("select", { class: "sv-config", "data-config-id": option.id, "aria-label": option.name });
    const asOption = (o: SessionConfigSelectOption): HTMLOptionElement => el("option", { value: o.value, title: o.description ?? undefined }, o.name);
    for (const item of option.options) {
      if ("group" in item) {
        const group: SessionConfigSelectGroup = item;
        select.append(el("optgroup", { label: group.name }, ...group.options.map(asOption)));
      } else {
        select.append(asOption(item));
      }
    }
    select.value = option.currentValue;
    select.addEventListener("change", () => this.host.setConfigOption(option.id, select.value));
    return el("label", { class: "sv-field", title: option.description ?? undefined }, el("span", {}, option.name), select);
  }
}
