// A control request whose params or result hold a secret (a device token):
// the verbose trace of the control protocol logs both, so it is off while the
// request runs and the secret never reaches the output channel.
import * as vscode from "vscode";
import { Trace, type LanguageClient } from "vscode-languageclient/node";
import { SECTION } from "../config.ts";

export async function untraced<T>(client: LanguageClient, send: () => Promise<T>): Promise<T> {
  const trace = Trace.fromString(vscode.workspace.getConfiguration(SECTION).get<string>("trace.server", "off"));
  await client.setTrace(Trace.Off);
  try {
    return await send();
  } finally {
    await client.setTrace(trace);
  }
}
