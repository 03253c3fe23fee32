// The /v1 route on cleartext HTTP/2 (prior knowledge): the same handler serves
// the HTTP/2 compatibility objects. Called by curl --http2-prior-knowledge, a
// client we did not write, and by node:http2 to cut a stream mid-way.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { connect, constants } from "node:http2";
import { promisify } from "node:util";
import { curlH2c, startV1, TOKEN, type V1Harness } from "./harness.ts";

const run = promisify(execFile);

function postArgs(url: string, body: unknown): string[] {
  return ["-H", "Content-Type: application/json", "-d", JSON.stringify(body), url];
}

describe("/v1 over HTTP/2 (h2c) with curl --http2-prior-knowledge", () => {
  let v1: V1Harness;
  before(async () => {
    v1 = await startV1({ http2: true, limits: { concurrencyPerBackend: 1 } });
  });
  after(() => v1.close());

  it("POST deferred → request_id; GET → 202 with an empty body until ready, then 200 once, then 404", async () => {
    const submitted = await curlH2c(
      postArgs(`${v1.baseURL}/chat/completions`, { model: "fixture", messages: [{ role: "user", content: "slow 200\necho over h2" }], deferred: true }),
    );
    assert.equal(submitted.status, 200);
    assert.equal(submitted.version, "2");
    const { request_id } = JSON.parse(submitted.body) as { request_id: string };
    let got = await curlH2c([`${v1.baseURL}/chat/deferred-completion/${request_id}`]);
    assert.equal(got.status, 202);
    assert.equal(got.body, "");
    while (got.status === 202) {
      await new Promise((r) => setTimeout(r, 50));
      got = await curlH2c([`${v1.baseURL}/chat/deferred-completion/${request_id}`]);
    }
    assert.equal(got.status, 200);
    const body = JSON.parse(got.body) as { id: string; object: string; choices: Array<{ message: { content: string } }> };
    assert.equal(body.id, request_id);
    assert.equal(body.object, "chat.completion");
    assert.equal(body.choices[0]?.message.content, "over h2");
    assert.equal((await curlH2c([`${v1.baseURL}/chat/deferred-completion/${request_id}`])).status, 404);
  });

  it("stream: true → data: chunks, the last one data: [DONE]", async () => {
    const got = await curlH2c(["-N", ...postArgs(`${v1.baseURL}/chat/completions`, { model: "fixture", messages: [{ role: "user", content: "echo stream\necho ed" }], stream: true })]);
    assert.equal(got.status, 200);
    const events = got.body.split("\n\n").filter((e) => e.length > 0);
    assert.equal(events.at(-1), "data: [DONE]");
    const text = events
      .slice(0, -1)
      .map((e) => JSON.parse(e.slice("data: ".length)) as { choices: Array<{ delta: { content?: string } }> })
      .map((c) => c.choices[0]?.delta.content ?? "")
      .join("");
    assert.equal(text, "streamed");
  });

  it("no token → 401 with www-authenticate: Bearer", async () => {
    const { stdout } = await run("curl", ["-s", "-i", "--http2-prior-knowledge", `${v1.baseURL}/models`]);
    assert.match(stdout, /^HTTP\/2 401/);
    assert.match(stdout, /www-authenticate: Bearer/i);
  });

  it("a client that resets its stream mid-completion cancels the agent turn and frees the backend's slot", async () => {
    const session = connect(v1.url);
    try {
      const stream = session.request({
        [constants.HTTP2_HEADER_METHOD]: "POST",
        [constants.HTTP2_HEADER_PATH]: "/v1/chat/completions",
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
      });
      stream.end(JSON.stringify({ model: "fixture", messages: [{ role: "user", content: "echo started\nslow 600000" }], stream: true }));
      // Wait for the agent's first words, then go away.
      await new Promise<void>((resolve) => {
        let text = "";
        stream.on("data", (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('"started"')) resolve();
        });
      });
      stream.close(constants.NGHTTP2_CANCEL);
    } finally {
      session.close();
    }
    // One slot per backend here: this completion runs only once the cut one let go of it.
    const got = await curlH2c(postArgs(`${v1.baseURL}/chat/completions`, { model: "fixture", messages: [{ role: "user", content: "echo next" }] }));
    assert.equal(got.status, 200);
    assert.equal((JSON.parse(got.body) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, "next");
  });
});
