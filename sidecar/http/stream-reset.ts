// An HTTP/2 stream its client reset is destroyed, even with writes queued.
//
// node:http2 destroys a server stream the client reset with NO_ERROR (what
// node's and undici's clients send when they close a stream) only once its
// writes have completed; writes still waiting for the client's flow-control
// window then never complete. Such a stream never closes for the code that
// owns it: 'close' never comes, so an SSE reader is never released (the
// client that opens its stream again gets 409), and its connection never
// ends: after the client's GOAWAY the session waits for the stream and no
// longer reads its socket, which stays in CLOSE-WAIT with the client waiting
// for it to close. Nothing can be sent on a reset stream any more: destroying
// it fails the queued writes and lets everything else finish.
import type { ServerHttp2Stream } from "node:http2";

export function destroyWhenReset(stream: ServerHttp2Stream): void {
  const release = (): void => {
    // Closed at the protocol level, yet not destroyed: only queued writes hold it.
    if (stream.closed && !stream.destroyed) stream.destroy();
  };
  // A reset comes as 'aborted' while the answer was still being written, and
  // as the request's 'end' (node pushes it then) after the answer ended with
  // data still queued. Both are emitted from inside node's own handling of
  // the reset: the stream is destroyed once that is done.
  stream.once("aborted", () => setImmediate(release));
  stream.once("end", () => setImmediate(release));
}
