// Limits of the web client's route, with their units.

/** How long a browser keeps a hashed asset (app-[hash].js, .css) without asking again (seconds: one year). */
export const DEFAULT_WEB_IMMUTABLE_MAX_AGE_S = 31_536_000;
