// The names of the store's keys, all under one prefix (the layout is
// described at the top of ./index.ts). Scripts that reach keys they compute
// (a job's owner set, a backend's queue) get the prefix as an argument and
// build the same names in Lua.

export const PREFIX = "acp-remote:";

export const keys = {
  schema: `${PREFIX}schema`,
  session: (id: string) => `${PREFIX}session:${id}`,
  sessions: `${PREFIX}sessions`,
  journal: (id: string) => `${PREFIX}journal:${id}`,
  journalBytes: (id: string) => `${PREFIX}journal-bytes:${id}`,
  job: (id: string) => `${PREFIX}job:${id}`,
  jobsCreated: `${PREFIX}jobs:created`,
  jobsPending: (backend: string) => `${PREFIX}jobs:pending:${backend}`,
  jobsBackends: `${PREFIX}jobs:backends`,
  jobsRunning: `${PREFIX}jobs:running`,
  jobsActive: (owner: string) => `${PREFIX}jobs:active:${owner}`,
  jobsSeq: `${PREFIX}jobs:seq`,
  rate: (key: string) => `${PREFIX}rate:${key}`,
  devices: `${PREFIX}devices`,
  devicesUsed: `${PREFIX}devices:used`,
  devicesPush: `${PREFIX}devices:push`,
  settings: `${PREFIX}settings`,
  node: (id: string) => `${PREFIX}node:${id}`,
  nodes: `${PREFIX}nodes`,
  events: `${PREFIX}events`,
} as const;
