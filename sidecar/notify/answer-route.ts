// POST /notify/answer: a notification's Allow or Reject, sent by the web
// client's service worker or by the ntfy app, with no bearer token: the
// one-use capability in the body is the credential. It answers the request
// through the same first-answer-wins resolve as a client or the editor.
//
//   200 {answered: true, optionId}     the answer settled the request
//   400 {error}                        not {capability, optionId} as JSON
//   405                                not a POST
//   410 {error}                        the capability is used up, unknown, or its
//                                      request was answered or withdrawn meanwhile
//   413 {error}                        the body is too large
//
// A capability names the node whose request it answers. On a shared store an
// answer that reached another node (a balancer sends it anywhere) is passed
// on to that node once, over the nodes' own addresses.
import { type IncomingMessage, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { NOTIFY_ANSWER_PATH, type NotificationAnswer, type NotificationAnswered } from "../../protocol/notify.ts";
import { isRecord } from "../../protocol/jsonrpc.ts";
import type { HubNotices } from "../hub/types.ts";
import { BodyTooLargeError, readBody, RequestTimeoutError } from "../http/read-body.ts";
import type { HttpRequest, HttpResponse, Route } from "../http/types.ts";
import { type AnswerCapabilities, capabilityNode } from "./answer-capabilities.ts";
import { DEFAULT_NOTIFY_ANSWER_BODY_BYTES, DEFAULT_NOTIFY_SEND_TIMEOUT_MS } from "./limits.ts";

/** Marks an answer one node passed on to another: it is not passed on again. */
const PASSED_ON_HEADER = "acp-remote-passed-on";

export interface AnswerRouteOptions {
  capabilities: AnswerCapabilities;
  hub: HubNotices;
  nodeId: string;
  /** On a shared store: where a live node is reached (undefined when it is not alive). */
  nodeUrl?: (nodeId: string) => Promise<string | undefined>;
  /** PEM certificates the other nodes' TLS certificates chain to (`--node-ca`). */
  nodeCa?: string;
}

interface Reply {
  status: number;
  body: unknown;
}

const refused = (status: number, message: string): Reply => ({ status, body: { error: { message } } });

export function createAnswerRoute(options: AnswerRouteOptions): Route {
  function send(res: HttpResponse, reply: Reply, extra: Record<string, string> = {}): void {
    if (res.headersSent || res.destroyed) return;
    const bytes = Buffer.from(JSON.stringify(reply.body));
    res.writeHead(reply.status, { "content-type": "application/json", "cache-control": "no-store", "content-length": String(bytes.length), ...extra });
    res.end(bytes);
  }

  async function answer(req: HttpRequest): Promise<Reply> {
    let raw: Buffer;
    try {
      raw = await readBody(req, DEFAULT_NOTIFY_ANSWER_BODY_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return refused(413, error.message);
      throw error;
    }
    const parsed = parseAnswer(raw);
    if (parsed === undefined) return refused(400, "the body must be JSON {capability, optionId}");
    const node = capabilityNode(parsed.capability);
    if (node !== undefined && node !== options.nodeId) return passOn(node, raw, req.headers[PASSED_ON_HEADER] !== undefined);
    const redemption = options.capabilities.redeem(parsed.capability, parsed.optionId);
    if (redemption.kind === "refused") return refused(410, redemption.reason);
    if (!options.hub.answer(redemption.grant.permissionId, parsed.optionId)) return refused(410, "the request was answered or withdrawn meanwhile");
    const answered: NotificationAnswered = { answered: true, optionId: parsed.optionId };
    return { status: 200, body: answered };
  }

  /** The answer belongs to another node's request: that node answers it. */
  async function passOn(node: string, body: Buffer, passedOn: boolean): Promise<Reply> {
    const base = passedOn ? undefined : await options.nodeUrl?.(node);
    if (base === undefined) return refused(410, "the request this answers is no longer waiting");
    return post(new URL(`${base.replace(/\/+$/, "")}${NOTIFY_ANSWER_PATH}`), body, options.nodeCa);
  }

  return {
    prefix: NOTIFY_ANSWER_PATH,
    matches: (path) => path === NOTIFY_ANSWER_PATH,
    handle(req, res) {
      if (req.method !== "POST") {
        req.resume();
        send(res, refused(405, "POST an answer"), { allow: "POST" });
        return;
      }
      answer(req).then(
        (reply) => send(res, reply),
        (error: unknown) => {
          // The listener answered a request cut at its deadline itself.
          if (!(error instanceof RequestTimeoutError)) send(res, refused(500, error instanceof Error ? error.message : String(error)));
        },
      );
    },
    refuse(_req, res, refusal) {
      send(res, refused(refusal.status, refusal.message), refusal.status === 503 ? { "retry-after": String(refusal.retryAfterSeconds) } : {});
    },
  };
}

function parseAnswer(raw: Buffer): NotificationAnswer | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString("utf8"));
  } catch {
    return undefined;
  }
  if (!isRecord(value) || typeof value["capability"] !== "string" || typeof value["optionId"] !== "string") return undefined;
  return { capability: value["capability"], optionId: value["optionId"] };
}

/** POSTs the answer to another node and hands its reply back as it came. */
function post(url: URL, body: Buffer, ca: string | undefined): Promise<Reply> {
  return new Promise((resolve) => {
    const headers = { "content-type": "application/json", "content-length": String(body.length), [PASSED_ON_HEADER]: "1" };
    const options = { method: "POST", headers, timeout: DEFAULT_NOTIFY_SEND_TIMEOUT_MS };
    const onResponse = (res: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          parsed = { error: { message: `the node that holds the request answered ${res.statusCode}` } };
        }
        resolve({ status: res.statusCode ?? 502, body: parsed });
      });
      res.on("error", () => resolve(refused(502, "the node that holds the request did not answer")));
    };
    const req = url.protocol === "https:" ? httpsRequest(url, { ...options, ...(ca === undefined ? {} : { ca }) }, onResponse) : httpRequest(url, options, onResponse);
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", () => resolve(refused(502, "the node that holds the request cannot be reached")));
    req.end(body);
  });
}
