// How the Overview tree says when a paired device last used its token.

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** "never used", "used just now", "used 5 min ago", "used 3 h ago", "used 2 days ago". */
export function lastUsedText(lastUsedAt: number | undefined, now: number): string {
  if (lastUsedAt === undefined) return "never used";
  const ago = Math.max(0, now - lastUsedAt);
  if (ago < MINUTE_MS) return "used just now";
  if (ago < HOUR_MS) return `used ${Math.floor(ago / MINUTE_MS)} min ago`;
  if (ago < DAY_MS) return `used ${Math.floor(ago / HOUR_MS)} h ago`;
  const days = Math.floor(ago / DAY_MS);
  return `used ${days} ${days === 1 ? "day" : "days"} ago`;
}
