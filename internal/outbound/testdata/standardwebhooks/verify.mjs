// Reads deliveries as JSON lines ({secret, headers, body}) on stdin and writes, for each, "ok" when
// both the Standard Webhooks library and Svix's verify it, "refused: ..." with both libraries'
// errors when both refuse it, and "disagree: ..." otherwise, one line each: the test compares them
// with what it expects, so a delivery that should fail is checked to fail for its own reason.
import { Webhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { createInterface } from "node:readline";

function verdict(verify) {
  try {
    verify();
    return null;
  } catch (err) {
    return err.message;
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { secret, headers, body } = JSON.parse(line);
  const standard = verdict(() => new Webhook(secret).verify(body, headers));
  const svix = verdict(() => new SvixWebhook(secret).verify(body, headers));
  if (standard === null && svix === null) console.log("ok");
  else if (standard !== null && svix !== null) console.log(`refused: ${standard} (svix: ${svix})`);
  else console.log(`disagree: standardwebhooks ${standard ?? "ok"}, svix ${svix ?? "ok"}`);
}
