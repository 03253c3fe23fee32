// Markdown to safe DOM. markdown-it with raw HTML off parses; DOMPurify cleans
// what comes out (a second line of defence should a renderer rule ever emit
// markup), links open outside the page without an opener, and only http(s)
// and mailto links survive: javascript:, data: and relative links (which would
// navigate the webview itself) lose their href. Images become links, so a
// message cannot make the page fetch anything.
import MarkdownIt from "markdown-it";
import DOMPurify from "dompurify";
import { el } from "./dom.ts";

const SAFE_LINK = /^(https?:|mailto:)/i;

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
md.renderer.rules.image = (tokens, idx) => {
  const token = tokens[idx]!;
  const src = token.attrGet("src") ?? "";
  const alt = md.utils.escapeHtml(token.content || String(src));
  return `<a href="${md.utils.escapeHtml(String(src))}" class="sv-image-link">${alt}</a>`;
};

// A message's headings sit below the screen's own (its one h1 is the session's name, and assistive technology
// navigates by level): each moves down two levels, "#" to h3, and no further than h6.
const HEADING_SHIFT = 2;
const shiftHeading: NonNullable<typeof md.renderer.rules.heading_open> = (tokens, idx, options, _env, self) => {
  const token = tokens[idx]!;
  token.tag = `h${Math.min(6, Number(token.tag.slice(1)) + HEADING_SHIFT)}`;
  return self.renderToken(tokens, idx, options);
};
md.renderer.rules.heading_open = shiftHeading;
md.renderer.rules.heading_close = shiftHeading;

const purify = DOMPurify(window);
purify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName !== "A") return;
  const href = node.getAttribute("href") ?? "";
  if (!SAFE_LINK.test(href.trim())) {
    node.removeAttribute("href");
    return;
  }
  node.setAttribute("target", "_blank");
  node.setAttribute("rel", "noopener noreferrer");
});

const PURIFY_CONFIG = {
  RETURN_DOM_FRAGMENT: true as const,
  FORBID_TAGS: ["img", "style", "form", "input", "button", "iframe", "object", "embed", "svg", "math"],
  FORBID_ATTR: ["style", "id", "name"],
};

/** Renders Markdown into a sanitised fragment; code blocks get a copy button. */
export function renderMarkdown(source: string): DocumentFragment {
  const fragment = purify.sanitize(md.render(source), PURIFY_CONFIG);
  for (const pre of Array.from(fragment.querySelectorAll("pre"))) {
    const wrap = el("div", { class: "sv-code" });
    pre.replaceWith(wrap);
    wrap.append(el("button", { type: "button", class: "sv-copy", "aria-label": "Copy code" }, "Copy"), pre);
  }
  return fragment;
}

/** Handles clicks on copy buttons below `root` (one listener for every re-render). */
export function copyButtons(root: HTMLElement): () => void {
  const onClick = (event: MouseEvent): void => {
    const button = (event.target as Element | null)?.closest?.("button.sv-copy");
    if (!(button instanceof HTMLButtonElement)) return;
    const code = button.parentElement?.querySelector("pre")?.textContent ?? "";
    navigator.clipboard.writeText(code).then(
      () => (button.textContent = "Copied"),
      () => (button.textContent = "Copy failed"),
    );
  };
  root.addEventListener("click", onClick);
  return () => root.removeEventListener("click", onClick);
}
