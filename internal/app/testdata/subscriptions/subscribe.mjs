// Subscribes to a Paygate /query with a real client, as a dashboard would, and writes what it
// hears as JSON lines on stdout:
//   {"connected": true}                      the client is connected (WebSocket) or subscribing (SSE)
//   {"next": <data>, "at": <ms since epoch>}  a result
//   {"errors": [...]}                        a result's errors (graphql-sse's reason for an end)
//   {"closed": {"code": n, "reason": "..."}} the WebSocket closed
//   {"complete": true}                       the server completed the subscription
//   {"error": {...}}                         the subscription ended in error: graphql-ws's error
//                                            message ({"errors": [...]}), the WebSocket's close
//                                            ({"code": n, "reason": "..."}), or else {"message": "..."}
// Usage: node subscribe.mjs ws|sse <url of /query> <credential> <document>
// Neither client retries, so that each end is seen as it is; the script exits once the
// subscription ends.
import { createClient as createWSClient } from "graphql-ws";
import { createClient as createSSEClient } from "graphql-sse";
import WebSocket from "ws";

const [transport, url, credential, query] = process.argv.slice(2);
const say = (line) => process.stdout.write(JSON.stringify(line) + "\n");

function client() {
  if (transport === "ws") {
    return createWSClient({
      url: url.replace(/^http/, "ws"),
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: "Bearer " + credential },
      retryAttempts: 0,
      lazy: false,
      onNonLazyError: () => {}, // told to the subscription's error too
      on: {
        connected: () => say({ connected: true }),
        closed: (event) => say({ closed: { code: event.code, reason: event.reason } }),
      },
    });
  }
  return createSSEClient({ url, headers: { Authorization: "Bearer " + credential }, retryAttempts: 0 });
}

const c = client();
if (transport === "sse") say({ connected: true });
const done = (line) => {
  say(line);
  c.dispose();
  process.exit(0);
};
c.subscribe(
  { query },
  {
    next: (result) => {
      if (result.errors) say({ errors: result.errors });
      if (result.data) say({ next: result.data, at: Date.now() });
    },
    error: (err) => {
      if (Array.isArray(err)) return done({ error: { errors: err } });
      if (err && typeof err.code === "number") return done({ error: { code: err.code, reason: err.reason } });
      done({ error: { message: String((err && err.message) || err) } });
    },
    complete: () => done({ complete: true }),
  },
);
