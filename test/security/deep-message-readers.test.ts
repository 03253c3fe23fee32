// The two readers that bound depth on a parsed message, each under a real
// vscode-jsonrpc connection over real streams: the newline-delimited reader of
// agents' stdio (common/ndjson.ts) and the control protocol's reader
// (sidecar/control/depth-bound-reader.ts). A request nested too deep is never
// handled (the agent's is reported with its id, the editor's answered
// -32600), an answer nested too deep fails the request it answers with -32600
// instead of leaving it waiting, a notification is dropped; and what is within
// the bound goes through untouched.
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { createMessageConnection, ResponseError, StreamMessageReader, StreamMessageWriter, type Message } from "vscode-jsonrpc/node";
import { DEFAULT_MAX_JSON_DEPTH } from "../../common/json-depth.ts";
import { NdjsonLineError, NdjsonMessageReader, NdjsonMessageWriter } from "../../common/ndjson.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { DepthBoundReader } from "../../sidecar/control/depth-bound-reader.ts";

/** JSON text of an array `depth` deep. */
const deep = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);
/** The messages below carry the array as their `params` or `result`, one level into the message. */
const WITHIN = DEFAULT_MAX_JSON_DEPTH - 1;
const OVER = DEFAULT_MAX_JSON_DEPTH;

/** Resolves with the next value `register` hands its callback, or rejects after `ms`. */
function nextOf<T>(register: (callback: (value: T) => void) => void, ms = 10_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nothing within ${ms} ms`)), ms);
    register((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

describe("NdjsonMessageReader: lines nested deeper than the bound", () => {
  test("a notification is skipped and reported; a request is reported with its id to answer; an answer fails its request with -32600", async () => {
    const fromPeer = new PassThrough();
    const toPeer = new PassThrough();
    const reader = new NdjsonMessageReader(fromPeer);
    const connection = createMessageConnection(reader, new NdjsonMessageWriter(toPeer));
    const errors: NdjsonLineError[] = [];
    const notifications: unknown[] = [];
    const requests: unknown[] = [];
    let reported: (error: NdjsonLineError) => void = () => undefined;
    reader.onError((error) => {
      errors.push(error as NdjsonLineError);
      reported(error as NdjsonLineError);
    });
    connection.onNotification("note", (params: unknown) => void notifications.push(params));
    connection.onRequest("ask", (params: unknown) => {
      requests.push(params);
      return "ok";
    });
    connection.listen();
    try {
      // Within the bound: all three go through.
      fromPeer.write(`{"jsonrpc":"2.0","method":"note","params":${deep(WITHIN)}}\n`);
      const answered = nextOf<string>((cb) => toPeer.once("data", (chunk: Buffer) => cb(chunk.toString())));
      fromPeer.write(`{"jsonrpc":"2.0","id":1,"method":"ask","params":${deep(WITHIN)}}\n`);
      assert.deepEqual(JSON.parse(await answered), { jsonrpc: "2.0", id: 1, result: "ok" });
      const within = connection.sendRequest("question");
      await nextOf((cb) => toPeer.once("data", cb));
      fromPeer.write(`{"jsonrpc":"2.0","id":0,"result":${deep(WITHIN)}}\n`);
      assert.equal(JSON.stringify(await within), deep(WITHIN));
      assert.deepEqual([notifications.length, requests.length, errors.length], [1, 1, 0]);

      // One level more: the notification and the request are reported, not handled.
      let next = nextOf<NdjsonLineError>((cb) => (reported = cb));
      fromPeer.write(`{"jsonrpc":"2.0","method":"note","params":${deep(OVER)}}\n`);
      assert.match((await next).message, new RegExp(`skipped a "note" message: .*deeper than ${DEFAULT_MAX_JSON_DEPTH} levels`));
      assert.equal((await next).requestId, undefined);
      next = nextOf<NdjsonLineError>((cb) => (reported = cb));
      fromPeer.write(`{"jsonrpc":"2.0","id":"r-2","method":"ask","params":${deep(OVER)}}\n`);
      assert.deepEqual([(await next).reason, (await next).requestId], ["too-deep", "r-2"]);
      // The answer to a request fails it with -32600 rather than leaving it waiting.
      const over = connection.sendRequest("question");
      await nextOf((cb) => toPeer.once("data", cb));
      fromPeer.write(`{"jsonrpc":"2.0","id":1,"result":${deep(OVER)}}\n`);
      await assert.rejects(over, (error: unknown) => error instanceof ResponseError && error.code === ErrorCode.InvalidRequest);
      assert.deepEqual([notifications.length, requests.length], [1, 1]);
    } finally {
      connection.dispose();
      fromPeer.end();
    }
  });
});

describe("DepthBoundReader: the editor's messages on the control protocol", () => {
  test("a request is answered -32600 with its id; an answer fails its request with -32600; a notification is dropped; within the bound all go through", async () => {
    const fromEditor = new PassThrough();
    const toEditor = new PassThrough();
    const writer = new StreamMessageWriter(toEditor);
    const reader = new DepthBoundReader(new StreamMessageReader(fromEditor), DEFAULT_MAX_JSON_DEPTH, (response) => void writer.write(response));
    const connection = createMessageConnection(reader, writer);
    const refused: string[] = [];
    reader.onError((error) => refused.push(error.message));
    const notifications: unknown[] = [];
    connection.onNotification("note", (params: unknown) => void notifications.push(params));
    connection.onRequest("ask", () => "ok");
    connection.listen();
    // What the sidecar writes, as the editor reads it.
    const fromSidecar: Message[] = [];
    let arrived: () => void = () => undefined;
    new StreamMessageReader(toEditor).listen((m) => {
      fromSidecar.push(m);
      arrived();
    });
    const nextFromSidecar = async (): Promise<Record<string, unknown>> => {
      if (fromSidecar.length === 0) await nextOf<void>((cb) => (arrived = cb));
      return fromSidecar.shift() as unknown as Record<string, unknown>;
    };
    const send = (json: string): void => void fromEditor.write(`Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
    try {
      for (const [depth, over] of [
        [WITHIN, false],
        [OVER, true],
      ] as const) {
        send(`{"jsonrpc":"2.0","method":"note","params":${deep(depth)}}`);
        send(`{"jsonrpc":"2.0","id":"ask-${depth}","method":"ask","params":${deep(depth)}}`);
        const answer = (await nextFromSidecar()) as { id: string; result?: unknown; error?: { code: number } };
        assert.equal(answer.id, `ask-${depth}`);
        if (over) assert.equal(answer.error?.code, ErrorCode.InvalidRequest);
        else assert.equal(answer.result, "ok");
        const question = connection.sendRequest<unknown>("question");
        const asked = (await nextFromSidecar()) as { id: number };
        send(`{"jsonrpc":"2.0","id":${asked.id},"result":${deep(depth)}}`);
        if (over) await assert.rejects(question, (error: unknown) => error instanceof ResponseError && error.code === ErrorCode.InvalidRequest);
        else assert.equal(JSON.stringify(await question), deep(depth));
      }
      assert.equal(notifications.length, 1, "only the notification within the bound is handled");
      assert.equal(refused.length, 3);
      assert.match(refused.join("\n"), new RegExp(`refused a "note" message: .*deeper than ${DEFAULT_MAX_JSON_DEPTH} levels`));
    } finally {
      connection.dispose();
      fromEditor.end();
    }
  });
});
