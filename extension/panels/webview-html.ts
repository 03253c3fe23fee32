// The HTML shell of our webviews: a strict Content-Security-Policy (scripts
// only with this page's nonce, no inline handlers, nothing remote), the
// editor's theme colours through `var(--vscode-*)`, and one bundled script
// from dist/webview/ (with, for the session tab, the session view's files).
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";

export function nonce(): string {
  return randomBytes(16).toString("base64");
}

/** Styles shared by every panel; only theme variables, so every theme reads well. */
const BASE_CSS = `
  body { color: var(--vscode-foreground); background: var(--vscode-editor-background);
         font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); padding: 0 16px 16px; }
  h1 { font-size: 1.3em; font-weight: 600; margin: 14px 0 10px; }
  h2 { font-size: 1.1em; font-weight: 600; margin: 0 0 6px; }
  .muted { color: var(--vscode-descriptionForeground); }
  .card { border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border)); border-radius: 4px;
          padding: 10px 12px; margin: 10px 0; background: var(--vscode-editorWidget-background); }
  .card.settled { opacity: 0.75; }
  .badge { display: inline-block; padding: 1px 6px; border-radius: 8px; font-size: 0.85em;
           background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
  button { font-family: inherit; font-size: inherit; padding: 4px 12px; margin: 6px 6px 0 0; border-radius: 2px;
           color: var(--vscode-button-foreground); background: var(--vscode-button-background);
           border: 1px solid var(--vscode-button-border, transparent); cursor: pointer; }
  button:hover { background: var(--vscode-button-hoverBackground); }
  button.secondary { color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); }
  button.secondary:hover { background: var(--vscode-button-secondaryHoverBackground); }
  button:focus-visible { outline: 1px solid var(--vscode-focusBorder); outline-offset: 2px; }
  button:disabled { opacity: 0.5; cursor: default; }
  pre, code { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
  pre { white-space: pre-wrap; word-break: break-word; margin: 6px 0; padding: 6px 8px;
        background: var(--vscode-textCodeBlock-background); border-radius: 3px; }
  .del { color: var(--vscode-gitDecoration-deletedResourceForeground); }
  .add { color: var(--vscode-gitDecoration-addedResourceForeground); }
  .toolbar { position: sticky; top: 0; background: var(--vscode-editor-background); padding: 8px 0;
             border-bottom: 1px solid var(--vscode-panel-border, transparent); }
`;

/** Files a page loads beside its script: the shared session view's bundle (dist/web/). */
export interface WebviewAssets {
  /** Style sheets, linked before the page's own styles so those can adjust them. */
  styles?: vscode.Uri[];
  /** ES modules the script imports at run time, by name: each URL is on #root as `data-module-<name>`. */
  modules?: Record<string, vscode.Uri>;
  /** More `data-<name>` attributes of #root, for the script. */
  data?: Record<string, string>;
}

export function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, script: string, title: string, css = "", assets: WebviewAssets = {}): string {
  const n = nonce();
  const src = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "dist", "webview", `${script}.js`));
  const modules = Object.entries(assets.modules ?? {}).map(([name, uri]) => [name, webview.asWebviewUri(uri).toString()] as const);
  const styles = (assets.styles ?? []).map((uri) => webview.asWebviewUri(uri).toString());
  // Files of the extension only (cspSource), and only when the page loads some: still no inline code, no eval.
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${n}'${styles.length > 0 ? ` ${webview.cspSource}` : ""}`,
    `script-src 'nonce-${n}'${modules.length > 0 ? ` ${webview.cspSource}` : ""}`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
  ].join("; ");
  const links = styles.map((href) => `<link rel="stylesheet" nonce="${n}" href="${attr(href)}">\n`).join("");
  const data = [...modules.map(([name, url]) => [`module-${name}`, url] as const), ...Object.entries(assets.data ?? {})]
    .map(([name, value]) => ` data-${name}="${attr(value)}"`)
    .join("");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${title}</title>
${links}<style nonce="${n}">${BASE_CSS}${css}</style>
</head>
<body>
<main id="root" aria-live="polite"${data}></main>
<script nonce="${n}" src="${src.toString()}"></script>
</body>
</html>`;
}

/** A URL as an attribute value (webview URLs carry no quotes, but a path may hold anything). */
function attr(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}
