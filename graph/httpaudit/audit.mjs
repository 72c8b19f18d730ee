// Runs every graphql-http server audit against a GraphQL over HTTP URL, prints each result that
// is not ok and exits 1 if there is any: warnings and notices count, as Paygate passes them all.
// Usage: node audit.mjs http://127.0.0.1:8080/query
import { serverAudits } from 'graphql-http';

const url = process.argv[2];
if (!url) {
  console.error('usage: node audit.mjs <url of /query>');
  process.exit(2);
}

let failed = 0;
const audits = serverAudits({ url });
for (const audit of audits) {
  let result;
  try {
    result = await audit.fn();
  } catch (err) {
    // An audit throws only when it could not run at all (the server is down, say).
    result = { id: audit.id, name: audit.name, status: 'error', reason: String(err) };
  }
  if (result.status !== 'ok') {
    failed++;
    console.log(`${result.status} ${result.id} ${result.name}: ${result.reason}`);
  }
}
console.log(`${audits.length - failed} of ${audits.length} graphql-http audits ok`);
process.exitCode = failed > 0 ? 1 : 0;
