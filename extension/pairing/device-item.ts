// A paired device in the Overview tree: its label, when it last used its
// token, and the context value its Revoke menu entry matches.
import * as vscode from "vscode";
import type { DeviceInfo } from "../../protocol/control.ts";
import { lastUsedText } from "./last-used.ts";

const DEVICE_CONTEXT_VALUE = "device";

export function deviceTreeItem(device: DeviceInfo, now: number): vscode.TreeItem {
  const item = new vscode.TreeItem(device.label);
  item.description = lastUsedText(device.lastUsedAt, now);
  item.tooltip = `${device.deviceId}\npaired ${new Date(device.createdAt).toLocaleString()}${device.lastUsedAt ? `\nlast used ${new Date(device.lastUsedAt).toLocaleString()}` : ""}`;
  item.iconPath = new vscode.ThemeIcon("device-mobile");
  item.contextValue = DEVICE_CONTEXT_VALUE;
  item.id = `device.${device.deviceId}`;
  return item;
}
