// The failure of what waited on an agent process that died: the requests we
// sent it (a prompt turn among them) and the requests it sent us (a
// permission request the person has not answered yet). It is told apart from
// an error the agent answered, because a turn cut off so is not the agent's
// answer: the hub ends it as interrupted (protocol/history.ts).
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";

export class AgentGone extends RpcFailure {
  /** The process was stopped on purpose (the server stops), not lost to a crash. */
  readonly stopped: boolean;

  constructor(message: string, stopped: boolean) {
    super(ErrorCode.InternalError, message);
    this.name = "AgentGone";
    this.stopped = stopped;
  }
}
