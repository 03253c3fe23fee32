// What every screen of the page returns: a way to take it down.
export interface Screen {
  dispose(): void;
}

/** An error's message for the person. */
export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
