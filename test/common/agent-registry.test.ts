// The ACP Registry's registry.json: parsed and checked, agents found by id or
// short name, and turned into the command that runs the version it pins.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  AgentRegistryError,
  describeAge,
  findRegistryAgent,
  parseAgentRegistry,
  parseAgentRegistrySnapshot,
  pinnedNpmPackage,
  pinnedPypiPackage,
  registryAgentSpec,
  registryPlatform,
} from "../../common/agent-registry.ts";
import { shippedAgentRegistry } from "../../common/agent-registry-source.ts";

const npxAgent = {
  id: "alpha-agent",
  name: "Alpha",
  version: "1.2.3",
  description: "An agent on npm",
  distribution: { npx: { package: "@example/alpha@1.2.3", args: ["--acp"], env: { ALPHA_MODE: "strict" } } },
};
const uvxAgent = { id: "beta", name: "Beta", version: "4.5.6", description: "An agent on PyPI", distribution: { uvx: { package: "beta-agent" } } };
const binaryAgent = {
  id: "zeta-agent",
  name: "Zeta",
  version: "0.9.0",
  description: "Archives only",
  distribution: { binary: { "linux-x86_64": { archive: "https://example.com/zeta.tar.gz", cmd: "./zeta", args: ["acp"] } } },
};

describe("registry.json", () => {
  test("a valid list parses with every field the schema names, authMethods included", () => {
    const { registry, problems } = parseAgentRegistry({
      version: "1.0.0",
      agents: [{ ...npxAgent, authors: ["A"], license: "MIT", repository: "https://example.com/a", authMethods: [{ id: "api-key", name: "API key", type: "env_var" }] }, uvxAgent],
      extensions: [],
    });
    assert.deepEqual(problems, []);
    assert.equal(registry.agents.length, 2);
    assert.deepEqual(registry.agents[0]?.authMethods, [{ id: "api-key", name: "API key", type: "env_var" }]);
    assert.deepEqual(registry.agents[0]?.authors, ["A"]);
  });

  test("a bad entry is skipped and named; the others stay", () => {
    const { registry, problems } = parseAgentRegistry({
      version: "1.0.0",
      agents: [npxAgent, { ...uvxAgent, id: "Bad_Id" }, { ...uvxAgent, id: "no-dist", distribution: {} }, { ...uvxAgent, version: "latest" }, npxAgent],
    });
    assert.deepEqual(registry.agents.map((a) => a.id), ["alpha-agent"]);
    assert.equal(problems.length, 4);
    assert.match(problems[0]!, /agents\[1\]\.id must be lowercase/);
    assert.match(problems[1]!, /no-dist.*none of npx, uvx or binary/);
    assert.match(problems[2]!, /version must be a semantic version/);
    assert.match(problems[3]!, /alpha-agent appears twice/);
  });

  test("what is not a registry at all is an error that says why", () => {
    assert.throws(() => parseAgentRegistry([]), /must be a JSON object/);
    assert.throws(() => parseAgentRegistry({ version: "1.0.0" }), /agents must be an array/);
    assert.throws(() => parseAgentRegistry({ version: "2.0.0", agents: [] }), /format version 2\.0\.0 is not supported/);
    assert.throws(() => parseAgentRegistrySnapshot({ registry: { version: "1.0.0", agents: [] } }), AgentRegistryError);
  });

  test("the snapshot shipped with the package parses whole, and names the registry's URL and date", () => {
    const shipped = shippedAgentRegistry();
    assert.equal(shipped.source, "snapshot");
    assert.deepEqual(shipped.problems, []);
    assert.ok(shipped.registry.agents.length >= 10);
    assert.match(shipped.url, /^https:\/\/.*\/registry\.json$/);
    assert.ok(!Number.isNaN(Date.parse(shipped.fetchedAt)));
    for (const id of ["claude-acp", "gemini", "qwen-code", "codex-acp", "opencode"]) assert.ok(findRegistryAgent(shipped.registry, id));
  });
});

describe("finding and running a registry agent", () => {
  const { registry } = parseAgentRegistry({ version: "1.0.0", agents: [npxAgent, uvxAgent, binaryAgent, { ...uvxAgent, id: "alpha-two" }] });

  test("by id, or by the first word of a single id", () => {
    assert.equal(findRegistryAgent(registry, "beta").id, "beta");
    assert.equal(findRegistryAgent(registry, "zeta").id, "zeta-agent");
    assert.equal(findRegistryAgent(registry, "ZETA").id, "zeta-agent");
    assert.throws(() => findRegistryAgent(registry, "alpha"), /names several agents of the ACP Registry: alpha-agent, alpha-two/);
    assert.throws(() => findRegistryAgent(registry, "nope"), /"nope" is not an agent of the ACP Registry \(known: alpha-agent, beta, zeta-agent, alpha-two\)/);
  });

  test("npx: `npx -y` the pinned package with the registry's args and env, under the name asked for", () => {
    assert.deepEqual(registryAgentSpec(findRegistryAgent(registry, "alpha-agent"), "alpha"), {
      name: "alpha",
      command: "npx",
      args: ["-y", "@example/alpha@1.2.3", "--acp"],
      env: { ALPHA_MODE: "strict" },
    });
  });

  test("uvx: the package pinned to the entry's version when it names none", () => {
    assert.deepEqual(registryAgentSpec(findRegistryAgent(registry, "beta")), { name: "beta", command: "uvx", args: ["beta-agent==4.5.6"] });
  });

  test("versions: a package without one gets the entry's; a scope's @ is not a version", () => {
    assert.equal(pinnedNpmPackage("@scope/name", "1.0.0"), "@scope/name@1.0.0");
    assert.equal(pinnedNpmPackage("@scope/name@2.0.0", "1.0.0"), "@scope/name@2.0.0");
    assert.equal(pinnedNpmPackage("plain", "1.0.0"), "plain@1.0.0");
    assert.equal(pinnedPypiPackage("pkg[acp]==3.1", "1.0.0"), "pkg[acp]==3.1");
    assert.equal(pinnedPypiPackage("pkg", "1.0.0"), "pkg==1.0.0");
  });

  test("binary: not downloaded; the error names the archive and the --agent flag to give once it is extracted", () => {
    assert.throws(
      () => registryAgentSpec(findRegistryAgent(registry, "zeta"), "zeta", "linux-x86_64"),
      /Zeta \(zeta-agent\) 0\.9\.0 is published as an archive to download \(https:\/\/example\.com\/zeta\.tar\.gz\); extract it and give --agent zeta="\/path\/to\/zeta acp"/,
    );
    assert.throws(() => registryAgentSpec(findRegistryAgent(registry, "zeta"), "zeta", "darwin-aarch64"), /no distribution for darwin-aarch64 \(only linux-x86_64\)/);
  });

  test("platform names as the registry spells them", () => {
    assert.equal(registryPlatform("linux", "x64"), "linux-x86_64");
    assert.equal(registryPlatform("darwin", "arm64"), "darwin-aarch64");
    assert.equal(registryPlatform("win32", "x64"), "windows-x86_64");
    assert.equal(registryPlatform("aix", "ppc64"), undefined);
  });

  test("ages in days", () => {
    const now = Date.parse("2026-03-10T12:00:00Z");
    assert.equal(describeAge("2026-03-10T01:00:00Z", now), "today");
    assert.equal(describeAge("2026-03-09T01:00:00Z", now), "1 day old");
    assert.equal(describeAge("2026-02-08T12:00:00Z", now), "30 days old");
  });
});
