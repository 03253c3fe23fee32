// The version the bundles carry (protocol/version.ts): package.json's, given
// to esbuild as the value of ACP_REMOTE_VERSION when scripts/build.mjs builds.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const REPO = resolve(import.meta.dirname, "..");

/** The version in the package.json of `root` (this checkout by default). */
export function packageVersion(root = REPO) {
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  if (typeof version !== "string") throw new Error(`${join(root, "package.json")} has no version`);
  return version;
}

/** esbuild's `define` that writes `version` into a bundle. */
export function versionDefine(version) {
  return { ACP_REMOTE_VERSION: JSON.stringify(version) };
}
