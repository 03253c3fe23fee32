// Every limit of the session view, with its unit. They keep one huge message,
// diff or tool output from freezing the page.

/** Messages longer than this render as plain text instead of Markdown (characters). */
export const DEFAULT_MARKDOWN_MAX_CHARS = 100_000;

/** Plain text shown of a message, or of a tool's text output, until "Show all" is pressed (characters). */
export const DEFAULT_PLAIN_PREVIEW_CHARS = 200_000;

/** A tool's text output longer than this shows as preformatted text instead of Markdown (characters). */
export const DEFAULT_TOOL_MARKDOWN_MAX_CHARS = 20_000;

/** Text shown of one tool call content block until "Show all" is pressed (characters). */
export const DEFAULT_TOOL_TEXT_PREVIEW_CHARS = 20_000;

/** Lines drawn of one diff; the rest is summarised (lines). */
export const DEFAULT_DIFF_MAX_LINES = 2_000;

/** Largest old×new line product the line diff aligns; past it the changed middle shows as removed then added (cells). */
export const DEFAULT_DIFF_MAX_CELLS = 4_000_000;

/** Slash commands listed at once in the completion popup (entries). */
export const DEFAULT_COMPLETION_MAX_ITEMS = 50;

/** Longest a Markdown re-render of a growing message is deferred after the last one, as a multiple of its own duration (factor). */
export const DEFAULT_RENDER_BACKOFF_FACTOR = 4;

/** How close to the bottom of the transcript (pixels) the reader counts as there: new output keeps scrolling into view. */
export const DEFAULT_FOLLOW_SLACK_PX = 48;

/**
 * How close to the top of the transcript (pixels) the view must be for the earlier turns of a paged history
 * to come: a reader scrolled up there, or the turns shown do not fill the screen.
 */
export const DEFAULT_EARLIER_TRIGGER_PX = 200;

/** A move up within this long of the person's own gesture (wheel, touch, key, pointer) is theirs, in milliseconds. */
export const DEFAULT_FOLLOW_GESTURE_MS = 1_000;
/**
 * With no gesture, a move up counts as the person's only when the transcript's size has held this long, in
 * milliseconds: a block drawn smaller than its estimate pulls the position up (the browser clamps it), and a
 * growth right after read as the person leaving the end.
 */
export const DEFAULT_FOLLOW_RESIZE_QUIET_MS = 150;
