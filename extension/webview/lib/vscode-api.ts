// The one global a webview script gets from VS Code, typed for our messages.
export interface VsCodeApi<T> {
  postMessage(message: T): void;
}

declare function acquireVsCodeApi<T>(): VsCodeApi<T>;

export function vscodeApi<T>(): VsCodeApi<T> {
  return acquireVsCodeApi<T>();
}

/** Creates an element with text (never HTML: everything shown comes from agents and clients). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}
