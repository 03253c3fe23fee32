// The machine a benchmark ran on, as its report records it: figures measured
// on different machines are not comparable, so every report says which.
import { cpus, totalmem } from "node:os";

export interface Machine {
  cpus: number;
  cpuModel: string;
  node: string;
  platform: string;
  totalMemMiB: number;
}

/** This process's machine and Node. */
export function thisMachine(): Machine {
  const cpu = cpus();
  return {
    cpus: cpu.length,
    cpuModel: cpu[0]?.model ?? "?",
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    totalMemMiB: Math.round(totalmem() / 2 ** 20),
  };
}
