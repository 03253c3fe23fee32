// A subscription to a set of listeners: adding one gives back the function
// that removes it again.

/** Adds `listener` to `listeners`; the function returned removes it. */
export function listen<L>(listeners: Set<L>, listener: L): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
