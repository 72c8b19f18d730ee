// A tour of Paygate from TypeScript: GraphQL through Apollo Client (queries and mutations over
// HTTP, subscriptions over WebSocket), then REST through openapi-fetch. Every type comes from the
// repository's schema.graphql and openapi.json; `npm run generate` rebuilds them.
//
//   PAYGATE_CARD=... PAYGATE_DECLINED_CARD=... node dist/example.js [base-url] [email] [password]
//   (or PAYGATE_URL, PAYGATE_EMAIL, PAYGATE_PASSWORD)
//
// The two cards are the sandbox's test cards, one it approves and one it declines (their numbers
// are in docs/providers.md): card numbers are never written into code.
import { randomUUID } from 'node:crypto';
import { ApolloClient, ApolloLink, CombinedGraphQLErrors, HttpLink, InMemoryCache } from '@apollo/client';
import { SetContextLink } from '@apollo/client/link/context';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { OperationTypeNode } from 'graphql';
import { createClient as createWsClient } from 'graphql-ws';
import createRestClient from 'openapi-fetch';
import { filter, firstValueFrom, timeout } from 'rxjs';
import WebSocket from 'ws';
import { graphql } from './gql/index.js';
import type { components, paths } from './rest/openapi.js';

// Apollo Client 4.1's "modern" signatures see that errorPolicy is "none" by default (errors
// throw), so a result's data is typed as present rather than possibly undefined.
declare module '@apollo/client' {
  export interface TypeOverrides {
    signatureStyle: 'modern';
  }
}

function usage(): never {
  console.error('usage: PAYGATE_CARD=<approved test card> PAYGATE_DECLINED_CARD=<declined test card> ' +
    'node dist/example.js [base-url] [email] password (or PAYGATE_URL, PAYGATE_EMAIL, PAYGATE_PASSWORD)');
  process.exit(2);
}
const [argBase, argEmail, argPassword] = process.argv.slice(2);
const base = argBase ?? process.env['PAYGATE_URL'] ?? 'http://127.0.0.1:8080';
const email = argEmail ?? process.env['PAYGATE_EMAIL'] ?? 'admin@localhost';
const password = argPassword ?? process.env['PAYGATE_PASSWORD'] ?? usage();
const approvedCard = process.env['PAYGATE_CARD'] ?? usage();
const declinedCard = process.env['PAYGATE_DECLINED_CARD'] ?? usage();

// ---- GraphQL operations: codegen reads these and types each one. ----

const Login = graphql(`
  mutation Login($input: LoginInput!) {
    login(input: $input) { accessToken }
  }
`);

const CreatePayment = graphql(`
  mutation CreatePayment($input: CreatePaymentInput!) {
    createPayment(input: $input) { id status amount currency provider failureCode }
  }
`);

const Payments = graphql(`
  query Payments($first: Int!, $after: Cursor) {
    payments(first: $first, after: $after) {
      totalCount
      edges { cursor node { id status amount currency } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

const RefundPayment = graphql(`
  mutation RefundPayment($input: RefundPaymentInput!) {
    refundPayment(input: $input) {
      id status amount
      payment { id status amountRefunded }
    }
  }
`);

const PaymentUpdated = graphql(`
  subscription PaymentUpdated($id: ID!) {
    paymentUpdated(id: $id) { id status amountRefunded }
  }
`);

const PaymentMetadata = graphql(`
  query PaymentMetadata($id: ID!) {
    payment(id: $id) { id metadata }
  }
`);

// ---- Money: REST amounts are JSON numbers in major units. ----

// ISO 4217 minor units as Paygate counts them (internal/money): 2 unless listed here.
const ZERO_DECIMALS = new Set('BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF'.split(' '));
const THREE_DECIMALS = new Set('BHD IQD JOD KWD LYD OMR TND'.split(' '));
function decimalsOf(currency: string): number {
  return ZERO_DECIMALS.has(currency) ? 0 : THREE_DECIMALS.has(currency) ? 3 : 2;
}

// Exact: Paygate's amounts have at most 15 digits (the default maximum payment is 999999.99),
// so the double nearest the JSON text, scaled, is within far less than 0.5 of the integer.
function toMinorUnits(amount: number, decimals: number): bigint {
  const minor = Math.round(amount * 10 ** decimals);
  if (!Number.isSafeInteger(minor)) throw new RangeError(`amount ${amount} is out of range`);
  return BigInt(minor);
}

// Writes minor units back as major-unit text with the currency's decimals: 4999n, 2 -> "49.99".
function formatMinor(minor: bigint, decimals: number): string {
  const digits = (minor < 0n ? -minor : minor).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const text = decimals === 0 ? whole : `${whole}.${digits.slice(-decimals)}`;
  return minor < 0n ? `-${text}` : text;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const card = { number: approvedCard, expMonth: 12, expYear: new Date().getFullYear() + 3, cvc: '123' };

// ---- GraphQL ----

let token = ''; // set by the login mutation; read by every request and the WebSocket after it

let wsConnected: () => void = () => {};
const connected = new Promise<void>((resolve) => (wsConnected = resolve));
const wsClient = createWsClient({
  url: `${base.replace(/^http/, 'ws')}/query`,
  webSocketImpl: WebSocket,
  connectionParams: () => ({ Authorization: `Bearer ${token}` }),
  on: { connected: () => wsConnected() },
});

const apollo = new ApolloClient({
  cache: new InMemoryCache(),
  link: ApolloLink.split(
    (operation) => operation.operationType === OperationTypeNode.SUBSCRIPTION,
    new GraphQLWsLink(wsClient),
    new SetContextLink(({ headers }) => ({
      headers: token ? { ...headers, Authorization: `Bearer ${token}` } : headers,
    })).concat(new HttpLink({ uri: `${base}/query` })),
  ),
});

// The code Paygate gives every GraphQL error (invalid_amount, not_found, refund_exceeds_payment...).
function graphqlErrorCode(error: unknown): string | undefined {
  if (!CombinedGraphQLErrors.is(error)) return undefined;
  const code = error.errors[0]?.extensions?.['code'];
  return typeof code === 'string' ? code : undefined;
}

async function paymentsPage(after: string | null) {
  const { data } = await apollo.query({ query: Payments, variables: { first: 2, after }, fetchPolicy: 'network-only' });
  return data.payments;
}

async function tourGraphQL(): Promise<void> {
  const { data: login } = await apollo.mutate({ mutation: Login, variables: { input: { email, password } } });
  token = login.login.accessToken;
  console.log('graphql: logged in');

  const { data: created } = await apollo.mutate({
    mutation: CreatePayment,
    variables: {
      input: {
        amount: '25.00', // Decimal travels as a string: never a float
        currency: 'USD',
        paymentMethod: 'CREDIT_CARD',
        customer: { email: 'ann@example.com', name: 'Ann Lee' },
        card,
        metadata: { order_id: 'ord_1001' },
        idempotencyKey: randomUUID(), // a retry with the same key cannot charge twice
      },
    },
  });
  const payment = created.createPayment;
  console.log(`graphql: created ${payment.id} ${payment.status} ${payment.amount} ${payment.currency} via ${payment.provider}`);
  // A declined card is not a GraphQL error: the payment comes back FAILED with its failureCode.
  if (payment.status !== 'SUCCEEDED') throw new Error(`payment ${payment.status}: ${payment.failureCode}`);

  // Page through the connection (newest first), three pages at most to keep the output short.
  // edges and node are non-null: no ?. and no ! needed.
  let after: string | null = null;
  for (let page = 1; page <= 3; page++) {
    const { edges, pageInfo, totalCount } = await paymentsPage(after);
    const items = edges.map(({ node }) => `${node.id} ${node.status} ${node.amount} ${node.currency}`);
    console.log(`graphql: payments page ${page} (${totalCount} in all): ${items.join(', ')}`);
    if (!pageInfo.hasNextPage) break;
    after = pageInfo.endCursor;
  }

  // Subscribe before refunding, and wait for the change the refund makes (earlier changes of the
  // payment may still be on their way to us, so pick the one that shows the refund).
  const update = firstValueFrom(
    apollo.subscribe({ query: PaymentUpdated, variables: { id: payment.id } }).pipe(
      filter((result) => result.error !== undefined || result.data?.paymentUpdated.status === 'PARTIALLY_REFUNDED'),
      timeout(15_000),
    ),
  );
  // graphql-transport-ws does not acknowledge a subscribe: once the socket is up, a moment's pause
  // lets the subscription reach the server before the change is made. (Should the socket fail,
  // the subscription's error ends the wait instead.)
  await Promise.race([connected, update]);
  await sleep(1000);

  const { data: refunded } = await apollo.mutate({
    mutation: RefundPayment,
    variables: { input: { paymentId: payment.id, amount: '10.00', idempotencyKey: randomUUID() } },
  });
  const refund = refunded.refundPayment;
  console.log(
    `graphql: refund ${refund.id} ${refund.status} ${refund.amount}; payment ${refund.payment.id} ` +
      `${refund.payment.status}, refunded ${refund.payment.amountRefunded}`,
  );

  const heard = await update;
  if (heard.error) throw heard.error;
  if (heard.data) {
    const p = heard.data.paymentUpdated;
    console.log(`graphql: subscription heard ${p.id} ${p.status}, refunded ${p.amountRefunded}`);
  }

  // Errors carry a stable code in extensions.code: refunding more than is left is refused.
  try {
    await apollo.mutate({
      mutation: RefundPayment,
      variables: { input: { paymentId: payment.id, amount: '1000.00', idempotencyKey: randomUUID() } },
    });
    throw new Error('an over-refund was accepted');
  } catch (error) {
    const code = graphqlErrorCode(error);
    if (code === undefined) throw error;
    console.log(`graphql: over-refund refused with ${code}`);
  }

  const { data: read } = await apollo.query({ query: PaymentMetadata, variables: { id: payment.id } });
  if (read.payment === null) throw new Error(`payment ${payment.id} not found`);
  const metadata: Record<string, string> = read.payment.metadata;
  console.log(`graphql: metadata of ${read.payment.id}: order_id=${metadata['order_id'] ?? '(none)'}`);
}

// ---- REST ----

type RestError = components['schemas']['Error'];

async function tourREST(): Promise<void> {
  const api = createRestClient<paths>({ baseUrl: base });

  const login = await api.POST('/api/v1/auth/login', { body: { email, password } });
  if (login.error) throw new Error(`REST login: ${login.error.error.code}: ${login.error.error.message}`);
  const accessToken = login.data.data.access_token;
  api.use({
    onRequest: ({ request }) => {
      request.headers.set('Authorization', `Bearer ${accessToken}`);
      return request;
    },
  });
  console.log('rest: logged in');

  const created = await api.POST('/api/v1/payments', {
    params: { header: { 'Idempotency-Key': randomUUID() } },
    body: {
      amount: '1000', // a string is read exactly, as a number would be
      currency: 'JPY',
      payment_method: 'credit_card',
      customer: { email: 'ann@example.com', name: 'Ann Lee' },
      card: { number: card.number, exp_month: card.expMonth, exp_year: card.expYear, cvc: card.cvc },
    },
  });
  if (created.error) throw new Error(`REST create: ${created.error.error.code}: ${created.error.error.message}`);
  const id = created.data.data.id;
  console.log(`rest: created ${id} ${created.data.data.status} (HTTP ${created.response.status})`);

  const got = await api.GET('/api/v1/payments/{id}', { params: { path: { id } } });
  if (got.error) throw new Error(`REST get: ${got.error.error.code}`);
  const p = got.data.data;
  const minor = toMinorUnits(p.amount, decimalsOf(p.currency));
  console.log(`rest: got ${p.id} ${p.status}: ${formatMinor(minor, decimalsOf(p.currency))} ${p.currency} = ${minor} minor units`);

  const list = await api.GET('/api/v1/payments', { params: { query: { limit: 3 } } });
  if (list.error) throw new Error(`REST list: ${list.error.error.code}`);
  for (const item of list.data.data) {
    const d = decimalsOf(item.currency);
    const minor = toMinorUnits(item.amount, d);
    console.log(`rest: listed ${item.id} ${item.status} ${formatMinor(minor, d)} ${item.currency} = ${minor} minor units`);
  }
  console.log(`rest: has_more ${list.data.has_more}`);

  // The error envelope: {success: false, error: {code, message, param?, request_id?}}. A declined
  // card (402) also carries the failed payment in data.
  const declined = await api.POST('/api/v1/payments', {
    params: { header: { 'Idempotency-Key': randomUUID() } },
    body: {
      amount: '5.00',
      currency: 'USD',
      payment_method: 'credit_card',
      customer: { email: 'ann@example.com' },
      card: { number: declinedCard, exp_month: card.expMonth, exp_year: card.expYear, cvc: card.cvc },
    },
  });
  if (!declined.error) throw new Error('the declining test card was approved');
  const envelope: RestError = declined.error;
  const failed = 'data' in declined.error ? ` (payment ${declined.error.data.id} ${declined.error.data.status})` : '';
  console.log(`rest: HTTP ${declined.response.status} ${envelope.error.code}: ${envelope.error.message}${failed}`);
}

try {
  await tourGraphQL();
  await tourREST();
  console.log('done');
} catch (error) {
  const code = graphqlErrorCode(error);
  console.error('failed:', code !== undefined && error instanceof Error ? `${code}: ${error.message}` : error);
  process.exitCode = 1;
} finally {
  apollo.stop();
  await wsClient.dispose(); // closes the WebSocket, so node can exit
}
