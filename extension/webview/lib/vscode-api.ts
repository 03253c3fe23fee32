// The one global a webview script gets from VS Code, typed for our messages
// and for the state VS Code keeps with the webview (across hiding and reloads).
export interface VsCodeApi<T, S = never> {
  postMessage(message: T): void;
  getState(): S | undefined;
  setState(state: S): void;
}

declare function acquireVsCodeApi<T, S>(): VsCodeApi<T, S>;

export function vscodeApi<T, S = never>(): VsCodeApi<T, S> {
  return acquireVsCodeApi<T, S>();
}

/** Creates an element with text (never HTML: everything shown comes from agents and clients). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}
