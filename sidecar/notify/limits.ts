// Limits of notifications (Web Push and ntfy), with their units.

/** Longest title of a notification, in characters (a phone shows one line). */
export const DEFAULT_NOTICE_TITLE_CHARS = 120;

/** Longest body of a notification, in characters (Web Push payloads are at most 4 KiB once encrypted). */
export const DEFAULT_NOTICE_BODY_CHARS = 300;

/** Longest JSON of a Web Push subscription a device may keep, in bytes (real ones are about 400). */
export const DEFAULT_PUSH_SUBSCRIPTION_BYTES = 2_048;

/** How long a push service keeps a notice that is not about a waiting request, in seconds (Web Push `TTL`). */
export const DEFAULT_PUSH_TTL_S = 3_600;

/** How long one send to a push service or to ntfy may take, in milliseconds. */
export const DEFAULT_NOTIFY_SEND_TIMEOUT_MS = 10_000;

/** Answer capabilities kept at once; past this the oldest is dropped (capabilities). */
export const DEFAULT_MAX_ANSWER_CAPABILITIES = 1_024;

/** Largest body of an answer to /notify/answer, in bytes. */
export const DEFAULT_NOTIFY_ANSWER_BODY_BYTES = 4_096;

/** Random bytes of an answer capability (bytes: 256 bits). */
export const DEFAULT_ANSWER_CAPABILITY_BYTES = 32;
