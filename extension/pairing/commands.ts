// Connect a Device (pair: a label, then the panel with the link) and Revoke
// Device (from the Overview's context menu, or a pick), as entries of the
// command table.
import * as vscode from "vscode";
import { ControlRequest, type DeviceInfo } from "../../protocol/control.ts";
import { Command } from "../command-ids.ts";
import type { CommandSpec } from "../command-spec.ts";
import type { Ctx } from "../ctx.ts";
import { untraced } from "./untraced.ts";

const DEFAULT_DEVICE_LABEL = "Phone";

/** The device a command was given: a tree node ({ device }), a device id, or none (then the person picks). */
async function deviceOf(ctx: Ctx, arg: unknown): Promise<DeviceInfo | undefined> {
  await ctx.refreshStatus();
  const devices = ctx.status?.devices ?? [];
  const id = typeof arg === "string" ? arg : (arg as { device?: DeviceInfo } | undefined)?.device?.deviceId;
  if (id !== undefined) return devices.find((d) => d.deviceId === id);
  if (devices.length === 0) {
    void vscode.window.showInformationMessage("ACP Remote: no paired devices.");
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    devices.map((d) => ({ label: d.label, description: new Date(d.createdAt).toLocaleString(), device: d })),
    { title: "ACP Remote: revoke which device?" },
  );
  return pick?.device;
}

export const PAIRING_COMMANDS: readonly CommandSpec[] = [
  {
    id: Command.connectDevice,
    whenDown: "offerStart",
    run: async (ctx, views) => {
      const label = await vscode.window.showInputBox({
        title: "ACP Remote: Connect a Device",
        prompt: "A name for the device, to find it in the Overview and revoke it later.",
        value: DEFAULT_DEVICE_LABEL,
        ignoreFocusOut: true,
      });
      if (label === undefined) return;
      const client = ctx.client();
      const paired = await untraced(client, () => client.sendRequest(ControlRequest.pairDevice, { label: label.trim() || DEFAULT_DEVICE_LABEL }));
      ctx.log.info(`Paired a device: ${paired.device.label} (${paired.device.deviceId})`);
      await views.pairing.show(paired);
    },
  },
  {
    id: Command.revokeDevice,
    whenDown: "inform",
    run: async (ctx, _views, arg) => {
      const device = await deviceOf(ctx, arg);
      if (!device) return;
      const revoke = "Revoke";
      const choice = await vscode.window.showWarningMessage(
        `Revoke "${device.label}"? Its token stops working at once and its open connections close; your sessions stay yours.`,
        revoke,
      );
      if (choice !== revoke) return;
      await ctx.client().sendRequest(ControlRequest.revokeDevice, { deviceId: device.deviceId });
      ctx.log.info(`Revoked the device ${device.label} (${device.deviceId})`);
      await ctx.refreshStatus();
    },
  },
];
