/** The version of acp-remote, reported by `--version`, in `initialize` and to the editor. */
export const VERSION = "0.1.0";
