// Reads deliveries as JSON lines ({secret, headers, body}) on stdin and writes, for each, "ok" or
// the Standard Webhooks library's error, one line each: the test compares them with what it
// expects, so a delivery that should fail is checked to fail for its own reason.
import { Webhook } from "standardwebhooks";
import { createInterface } from "node:readline";

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { secret, headers, body } = JSON.parse(line);
  try {
    new Webhook(secret).verify(body, headers);
    console.log("ok");
  } catch (err) {
    console.log("refused: " + err.message);
  }
}
