// Subscribes to a Paygate /query with a real client, as a dashboard would, and writes what it
// hears as JSON lines on stdout: {"next": <data>, "at": <ms since the epoch>} for each result,
// then {"complete": true} when the server ends the subscription, or {"error": ...}.
// Usage: node subscribe.mjs ws|sse <url of /query> <credential> <document> [results to wait for]
// It exits once the subscription ends, or after the given number of results.
import { createClient as createWSClient } from "graphql-ws";
import { createClient as createSSEClient } from "graphql-sse";
import WebSocket from "ws";

const [transport, url, credential, query, wanted] = process.argv.slice(2);
const limit = wanted ? Number(wanted) : Infinity;
const say = (line) => process.stdout.write(JSON.stringify(line) + "\n");
let results = 0;

function client() {
  if (transport === "ws") {
    return createWSClient({
      url: url.replace(/^http/, "ws"),
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: "Bearer " + credential },
      retryAttempts: 0,
      lazy: false,
      on: {
        connected: () => say({ connected: true }),
        // A connection refused at connection_init closes before any subscription hears of it.
        closed: (event) => done({ error: "closed " + event.code + " " + event.reason }, 0),
      },
    });
  }
  return createSSEClient({ url, headers: { Authorization: "Bearer " + credential }, retryAttempts: 0 });
}

const c = client();
if (transport === "sse") say({ connected: true });
const done = (line, code) => {
  say(line);
  c.dispose();
  process.exit(code);
};
c.subscribe(
  { query },
  {
    next: (result) => {
      if (result.errors) return done({ error: result.errors }, 0);
      say({ next: result.data, at: Date.now() });
      if (++results >= limit) done({ complete: true, by: "client" }, 0);
    },
    error: (err) => done({ error: String(err && (err.message || err.reason || err.code || err)) }, 0),
    complete: () => done({ complete: true, by: "server" }, 0),
  },
);
