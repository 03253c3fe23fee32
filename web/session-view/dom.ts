// A tiny element builder: the view builds nodes, never HTML strings (only the
// sanitised Markdown output becomes markup).

type Attrs = Record<string, string | number | boolean | undefined>;
type Child = Node | string | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

/** Human form of a protocol word: `in_progress` → `in progress`. */
export function words(id: string): string {
  return id.replace(/_/g, " ");
}

/** Length of a text for labels: 5242880 → "5.2 M characters". */
export function sizeLabel(chars: number): string {
  if (chars >= 1_000_000) return `${(chars / 1_000_000).toFixed(1)} M characters`;
  if (chars >= 1_000) return `${Math.round(chars / 1_000)} k characters`;
  return `${chars} characters`;
}
