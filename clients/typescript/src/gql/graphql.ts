/* eslint-disable */
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type Maybe<T> = T | null;
export type InputMaybe<T> = T | null | undefined;
export type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
export type MakeOptional<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]?: Maybe<T[SubKey]> };
export type MakeMaybe<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]: Maybe<T[SubKey]> };
export type MakeEmpty<T extends { [key: string]: unknown }, K extends keyof T> = { [_ in K]?: never };
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: string; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
  /**
   * Define a Relay Cursor type:
   * https://relay.dev/graphql/connections.htm#sec-Cursor
   */
  Cursor: { input: string; output: string; }
  /**
   * An exact decimal amount in the currency's major unit. Served as a string ("49.99"); accepted as a
   * string or a number, read from its text, never through floating point.
   */
  Decimal: { input: string; output: string; }
  /** A JSON value, as the REST API writes it (snake_case names, amounts as numbers). */
  JSON: { input: unknown; output: unknown; }
  /** A JSON object of string keys to string values, for merchant metadata. */
  StringMap: { input: Record<string, string>; output: Record<string, string>; }
  /** An RFC 3339 time in UTC, as a string. */
  Time: { input: string; output: string; }
};

/** A key a program calls Paygate with, as Authorization: Bearer <key> or X-API-Key: <key>, acting for the user who made it with some of that user's scopes. */
export type ApiKey = {
  __typename?: 'APIKey';
  createdAt: Scalars['Time']['output'];
  /** When the key stops working; null for never. A key made by a key expires no later than its parent. */
  expiresAt: Maybe<Scalars['Time']['output']>;
  id: Scalars['ID']['output'];
  /** When the key was last used, to the minute; null before its first use. */
  lastUsedAt: Maybe<Scalars['Time']['output']>;
  name: Scalars['String']['output'];
  /** The key that made this one, when a program made it with a key: it expires no later than that key, and is revoked with it. Null when a person (or the command line) made it. */
  parentId: Maybe<Scalars['ID']['output']>;
  /** The key's first characters (pk_test_... or pk_live_...), to tell keys apart; the key itself is shown only when it is made. */
  prefix: Scalars['String']['output'];
  revokedAt: Maybe<Scalars['Time']['output']>;
  scopes: Array<Scalars['String']['output']>;
  /** The user the key acts for: it stops working when they are disabled, and never has a scope they lost. */
  userId: Scalars['ID']['output'];
};

/** A page of API keys, oldest first. */
export type ApiKeyPage = {
  __typename?: 'APIKeyPage';
  /** Whether more keys lie beyond the page in the direction it was read: after it for first, before it for last. */
  hasMore: Scalars['Boolean']['output'];
  keys: Array<ApiKey>;
};

export type Alert = Node & {
  __typename?: 'Alert';
  acknowledgedAt: Maybe<Scalars['Time']['output']>;
  acknowledgedBy: Maybe<Scalars['String']['output']>;
  /** The email of who acknowledged it (a user, or the user of the API key used); null when the caller may not know them. */
  acknowledgedByEmail: Maybe<Scalars['String']['output']>;
  history: Array<AlertChange>;
  id: Scalars['ID']['output'];
  message: Scalars['String']['output'];
  openedAt: Scalars['Time']['output'];
  resolvedAt: Maybe<Scalars['Time']['output']>;
  resolvedBy: Maybe<Scalars['String']['output']>;
  /** The email of who resolved it, as acknowledgedByEmail. */
  resolvedByEmail: Maybe<Scalars['String']['output']>;
  rule: Scalars['String']['output'];
  severity: AlertSeverity;
  status: AlertStatus;
  subject: Scalars['String']['output'];
};

export type AlertAction =
  | 'ACKNOWLEDGED'
  | 'OPENED'
  | 'RESOLVED';

export type AlertChange = Node & {
  __typename?: 'AlertChange';
  action: AlertAction;
  at: Scalars['Time']['output'];
  by: Scalars['String']['output'];
  id: Scalars['ID']['output'];
};

/** A connection to a list of items. */
export type AlertConnection = {
  __typename?: 'AlertConnection';
  /** A list of edges. */
  edges: Array<AlertEdge>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
  /** Identifies the total count of items in the connection. */
  totalCount: Scalars['Int']['output'];
};

/** An edge in a connection. */
export type AlertEdge = {
  __typename?: 'AlertEdge';
  /** A cursor for use in pagination. */
  cursor: Scalars['Cursor']['output'];
  /** The item at the end of the edge. */
  node: Alert;
};

/** Ordering options for Alert connections */
export type AlertOrder = {
  /** The ordering direction. */
  direction?: OrderDirection;
  /** The field by which to order Alerts. */
  field: AlertOrderField;
};

/** Properties by which Alert connections can be ordered. */
export type AlertOrderField =
  | 'OPENED_AT';

/** Thresholds of the alert rules: a provider failing more than providerErrorRate of its calls in the circuit breaker's window; refunds in an hour above refundShare of the volume they came from (what the payments made or refunded in that hour captured), per currency. */
export type AlertSettings = {
  __typename?: 'AlertSettings';
  providerErrorRate: Scalars['Float']['output'];
  refundShare: Scalars['Float']['output'];
};

export type AlertSettingsInput = {
  providerErrorRate: Scalars['Float']['input'];
  refundShare: Scalars['Float']['input'];
};

export type AlertSeverity =
  | 'CRITICAL'
  | 'INFO'
  | 'WARNING';

export type AlertStatus =
  /** Someone is on it. */
  | 'ACKNOWLEDGED'
  /** Raised by a rule; nobody has acknowledged it. */
  | 'OPEN'
  /** Closed: a rule that finds its condition again raises a new alert. */
  | 'RESOLVED';

/**
 * AlertWhereInput is used for filtering Alert objects.
 * Input was generated by ent.
 */
export type AlertWhereInput = {
  and?: InputMaybe<Array<AlertWhereInput>>;
  /** id field predicates */
  id?: InputMaybe<Scalars['ID']['input']>;
  idContainsFold?: InputMaybe<Scalars['ID']['input']>;
  idEqualFold?: InputMaybe<Scalars['ID']['input']>;
  idGT?: InputMaybe<Scalars['ID']['input']>;
  idGTE?: InputMaybe<Scalars['ID']['input']>;
  idIn?: InputMaybe<Array<Scalars['ID']['input']>>;
  idLT?: InputMaybe<Scalars['ID']['input']>;
  idLTE?: InputMaybe<Scalars['ID']['input']>;
  idNEQ?: InputMaybe<Scalars['ID']['input']>;
  idNotIn?: InputMaybe<Array<Scalars['ID']['input']>>;
  not?: InputMaybe<AlertWhereInput>;
  /** opened_at field predicates */
  openedAt?: InputMaybe<Scalars['Time']['input']>;
  openedAtGT?: InputMaybe<Scalars['Time']['input']>;
  openedAtGTE?: InputMaybe<Scalars['Time']['input']>;
  openedAtIn?: InputMaybe<Array<Scalars['Time']['input']>>;
  openedAtLT?: InputMaybe<Scalars['Time']['input']>;
  openedAtLTE?: InputMaybe<Scalars['Time']['input']>;
  openedAtNEQ?: InputMaybe<Scalars['Time']['input']>;
  openedAtNotIn?: InputMaybe<Array<Scalars['Time']['input']>>;
  or?: InputMaybe<Array<AlertWhereInput>>;
  /** rule field predicates */
  rule?: InputMaybe<Scalars['String']['input']>;
  ruleContains?: InputMaybe<Scalars['String']['input']>;
  ruleContainsFold?: InputMaybe<Scalars['String']['input']>;
  ruleEqualFold?: InputMaybe<Scalars['String']['input']>;
  ruleGT?: InputMaybe<Scalars['String']['input']>;
  ruleGTE?: InputMaybe<Scalars['String']['input']>;
  ruleHasPrefix?: InputMaybe<Scalars['String']['input']>;
  ruleHasSuffix?: InputMaybe<Scalars['String']['input']>;
  ruleIn?: InputMaybe<Array<Scalars['String']['input']>>;
  ruleLT?: InputMaybe<Scalars['String']['input']>;
  ruleLTE?: InputMaybe<Scalars['String']['input']>;
  ruleNEQ?: InputMaybe<Scalars['String']['input']>;
  ruleNotIn?: InputMaybe<Array<Scalars['String']['input']>>;
  /** severity field predicates */
  severity?: InputMaybe<AlertSeverity>;
  severityIn?: InputMaybe<Array<AlertSeverity>>;
  severityNEQ?: InputMaybe<AlertSeverity>;
  severityNotIn?: InputMaybe<Array<AlertSeverity>>;
  /** status field predicates */
  status?: InputMaybe<AlertStatus>;
  statusIn?: InputMaybe<Array<AlertStatus>>;
  statusNEQ?: InputMaybe<AlertStatus>;
  statusNotIn?: InputMaybe<Array<AlertStatus>>;
  /** subject field predicates */
  subject?: InputMaybe<Scalars['String']['input']>;
  subjectContains?: InputMaybe<Scalars['String']['input']>;
  subjectContainsFold?: InputMaybe<Scalars['String']['input']>;
  subjectEqualFold?: InputMaybe<Scalars['String']['input']>;
  subjectGT?: InputMaybe<Scalars['String']['input']>;
  subjectGTE?: InputMaybe<Scalars['String']['input']>;
  subjectHasPrefix?: InputMaybe<Scalars['String']['input']>;
  subjectHasSuffix?: InputMaybe<Scalars['String']['input']>;
  subjectIn?: InputMaybe<Array<Scalars['String']['input']>>;
  subjectLT?: InputMaybe<Scalars['String']['input']>;
  subjectLTE?: InputMaybe<Scalars['String']['input']>;
  subjectNEQ?: InputMaybe<Scalars['String']['input']>;
  subjectNotIn?: InputMaybe<Array<Scalars['String']['input']>>;
};

export type AuthPayload = {
  __typename?: 'AuthPayload';
  accessToken: Scalars['String']['output'];
  /** Lifetime of the access token in seconds. */
  expiresIn: Scalars['Int']['output'];
  refreshToken: Scalars['String']['output'];
  tokenType: Scalars['String']['output'];
};

export type CancelPaymentInput = {
  /** As in CreatePaymentInput. */
  idempotencyKey?: InputMaybe<Scalars['String']['input']>;
  paymentId: Scalars['ID']['input'];
  /** REQUESTED_BY_CUSTOMER (the default), DUPLICATE or FRAUDULENT. */
  reason?: InputMaybe<CancellationReason>;
};

/**
 * Why a payment was canceled: at the merchant's request (REQUESTED_BY_CUSTOMER, DUPLICATE,
 * FRAUDULENT), left unauthenticated for an hour (ABANDONED), or not captured by captureBefore
 * (EXPIRED).
 */
export type CancellationReason =
  | 'ABANDONED'
  | 'DUPLICATE'
  | 'EXPIRED'
  | 'FRAUDULENT'
  | 'REQUESTED_BY_CUSTOMER';

/** AUTOMATIC captures the amount at once; MANUAL authorises it, to be captured or canceled later. */
export type CaptureMethod =
  | 'AUTOMATIC'
  | 'MANUAL';

export type CapturePaymentInput = {
  /** The amount to capture, at most amountCapturable; omitted, all of it. What is not captured is released. */
  amount?: InputMaybe<Scalars['Decimal']['input']>;
  /** As in CreatePaymentInput. */
  idempotencyKey?: InputMaybe<Scalars['String']['input']>;
  paymentId: Scalars['ID']['input'];
};

/** How long an authorisation (a MANUAL capture) waits for capturePayment: windowH hours (1 to 720), then it is canceled as EXPIRED. */
export type CaptureSettings = {
  __typename?: 'CaptureSettings';
  windowH: Scalars['Int']['output'];
};

export type CaptureSettingsInput = {
  windowH: Scalars['Int']['input'];
};

/** The card a payment was made with. The full number and the CVC are never kept. */
export type Card = {
  __typename?: 'Card';
  brand: Scalars['String']['output'];
  expMonth: Scalars['Int']['output'];
  expYear: Scalars['Int']['output'];
  /** Keyed hash of the card number: the same card always has the same fingerprint. */
  fingerprint: Scalars['String']['output'];
  last4: Scalars['String']['output'];
};

export type CardInput = {
  cvc: Scalars['String']['input'];
  expMonth: Scalars['Int']['input'];
  expYear: Scalars['Int']['input'];
  number: Scalars['String']['input'];
};

export type ChangePasswordInput = {
  /** The caller's password now. */
  currentPassword: Scalars['String']['input'];
  /**
   * 12 characters to 72 bytes, not one of the 10,000 most common passwords (nor one with digits or
   * symbols around it), a run of keys or letters, a repetition, the email or "paygate".
   */
  newPassword: Scalars['String']['input'];
};

export type CircuitBreakerInput = {
  errorRate: Scalars['Float']['input'];
  minRequests: Scalars['Int']['input'];
  openS: Scalars['Int']['input'];
  windowS: Scalars['Int']['input'];
};

/**
 * A provider's circuit opens when at least minRequests calls in the last windowS seconds failed at
 * errorRate or more; it stays open openS seconds, then lets one call through to probe.
 */
export type CircuitBreakerSettings = {
  __typename?: 'CircuitBreakerSettings';
  errorRate: Scalars['Float']['output'];
  minRequests: Scalars['Int']['output'];
  openS: Scalars['Int']['output'];
  windowS: Scalars['Int']['output'];
};

/**
 * The runtime configuration: how payments are routed among the providers, each provider's
 * settings, when a provider's circuit opens, how webhook deliveries are retried and the request
 * budgets. Every change is a new version; the newest is in force on every server within seconds.
 */
export type Config = {
  __typename?: 'Config';
  alerts: AlertSettings;
  capture: CaptureSettings;
  circuitBreaker: CircuitBreakerSettings;
  /** Every provider's settings, by name; a provider left out is never tried. */
  providers: Array<ProviderSettings>;
  rateLimits: RateLimitSettings;
  routing: RoutingSettings;
  /** When this version was written; null for the built-in default, before any change. */
  updatedAt: Maybe<Scalars['Time']['output']>;
  /** The ID of the user who wrote this version (system for the built-in default); null before any change. */
  updatedBy: Maybe<Scalars['String']['output']>;
  /** Grows by one with each change. A change names the version it was made from. */
  version: Scalars['Int']['output'];
  webhookRetry: WebhookRetrySettings;
};

/** One version of the runtime configuration, as the history keeps it. */
export type ConfigChange = {
  __typename?: 'ConfigChange';
  changedAt: Scalars['Time']['output'];
  /** The ID of the user who wrote it (system for the built-in default). */
  changedBy: Scalars['String']['output'];
  document: Config;
  /** The version it replaced; null for the first. */
  previous: Maybe<Config>;
  version: Scalars['Int']['output'];
};

/**
 * A whole new configuration document, made from the version read: a change made from a version
 * that is no longer in force is refused (invalid_state), so no change is made over another unseen.
 */
export type ConfigInput = {
  alerts: AlertSettingsInput;
  /** Left out, it stays as in the version read. */
  capture?: InputMaybe<CaptureSettingsInput>;
  circuitBreaker: CircuitBreakerInput;
  providers: Array<ProviderSettingsInput>;
  rateLimits: RateLimitsInput;
  routing: RoutingInput;
  version: Scalars['Int']['input'];
  webhookRetry: WebhookRetryInput;
};

export type CreateApiKeyInput = {
  /** When the key stops working, within ten years; none for never. A key made with a key that expires expires no later than it: by default, at the same time. */
  expiresAt?: InputMaybe<Scalars['Time']['input']>;
  /** 1 to 100 characters. */
  name: Scalars['String']['input'];
  /** Scopes the caller holds, at least one. */
  scopes: Array<Scalars['String']['input']>;
};

export type CreateMerchantInput = {
  /** At most 100 bytes. */
  name: Scalars['String']['input'];
};

export type CreatePaymentInput = {
  amount: Scalars['Decimal']['input'];
  /** AUTOMATIC (the default) or MANUAL: authorise now, capturePayment or cancelPayment later. */
  captureMethod?: InputMaybe<CaptureMethod>;
  card?: InputMaybe<CardInput>;
  currency: Scalars['String']['input'];
  customer: CustomerInput;
  description?: InputMaybe<Scalars['String']['input']>;
  /**
   * Makes a retry safe: the same key with the same input answers the first response again, for
   * 24 hours. Wins over the Idempotency-Key header.
   */
  idempotencyKey?: InputMaybe<Scalars['String']['input']>;
  metadata?: InputMaybe<Scalars['StringMap']['input']>;
  paymentMethod: PaymentMethod;
  /**
   * Where the shopper's browser goes back to after authenticating (3-D Secure), when the card asks
   * for it: an absolute http or https URL of at most 2048 characters. Paygate adds payment_id and
   * status to its query.
   */
  returnUrl?: InputMaybe<Scalars['String']['input']>;
};

export type CreateUserInput = {
  email: Scalars['String']['input'];
  /** At least 12 characters, at most 72 bytes. */
  password: Scalars['String']['input'];
  /** Makes one of the platform's staff: only platform staff may, in their own merchant. */
  platform?: InputMaybe<Scalars['Boolean']['input']>;
  role: Scalars['String']['input'];
};

/**
 * A webhook endpoint to make: url (an absolute http or https URL, https in production, at most 2048
 * characters), the event types it is sent (or ["*"] for all), and a description of up to 500
 * characters.
 */
export type CreateWebhookEndpointInput = {
  description?: InputMaybe<Scalars['String']['input']>;
  events: Array<Scalars['String']['input']>;
  url: Scalars['String']['input'];
};

export type CurrencyVolume = {
  __typename?: 'CurrencyVolume';
  amount: Scalars['Decimal']['output'];
  currency: Scalars['String']['output'];
};

export type Customer = {
  __typename?: 'Customer';
  email: Scalars['String']['output'];
  name: Scalars['String']['output'];
};

export type CustomerInput = {
  email: Scalars['String']['input'];
  name?: InputMaybe<Scalars['String']['input']>;
};

/** This server's database connection pool. */
export type DatabaseMetrics = {
  __typename?: 'DatabaseMetrics';
  inUse: Scalars['Int']['output'];
  open: Scalars['Int']['output'];
  /** How many times a request waited for a connection, since start. */
  waitCount: Scalars['Int']['output'];
};

export type Event = Node & {
  __typename?: 'Event';
  createdAt: Scalars['Time']['output'];
  /**
   * What the event shows: {"object": ...}, the payment or refund as it was when the event happened,
   * exactly as it is delivered to webhook endpoints and as the REST API writes it.
   */
  data: Scalars['JSON']['output'];
  id: Scalars['ID']['output'];
  /**
   * The payment or refund the event tells of, typed as everywhere else in this API and as it is now
   * (data holds it as it was then), so that a client's cache of it stays true. Reading it needs
   * payments:read besides the events' scope.
   */
  object: EventObject;
  objectID: Scalars['String']['output'];
  type: Scalars['String']['output'];
};

/** A connection to a list of items. */
export type EventConnection = {
  __typename?: 'EventConnection';
  /** A list of edges. */
  edges: Array<EventEdge>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
  /** Identifies the total count of items in the connection. */
  totalCount: Scalars['Int']['output'];
};

/** An edge in a connection. */
export type EventEdge = {
  __typename?: 'EventEdge';
  /** A cursor for use in pagination. */
  cursor: Scalars['Cursor']['output'];
  /** The item at the end of the edge. */
  node: Event;
};

/** What an event tells of: a payment (payment.* and dispute.created) or a refund (refund.*). */
export type EventObject = Payment | Refund;

/** Ordering options for Event connections */
export type EventOrder = {
  /** The ordering direction. */
  direction?: OrderDirection;
  /** The field by which to order Events. */
  field: EventOrderField;
};

/** Properties by which Event connections can be ordered. */
export type EventOrderField =
  | 'CREATED_AT';

/**
 * EventWhereInput is used for filtering Event objects.
 * Input was generated by ent.
 */
export type EventWhereInput = {
  and?: InputMaybe<Array<EventWhereInput>>;
  /** created_at field predicates */
  createdAt?: InputMaybe<Scalars['Time']['input']>;
  createdAtGT?: InputMaybe<Scalars['Time']['input']>;
  createdAtGTE?: InputMaybe<Scalars['Time']['input']>;
  createdAtIn?: InputMaybe<Array<Scalars['Time']['input']>>;
  createdAtLT?: InputMaybe<Scalars['Time']['input']>;
  createdAtLTE?: InputMaybe<Scalars['Time']['input']>;
  createdAtNEQ?: InputMaybe<Scalars['Time']['input']>;
  createdAtNotIn?: InputMaybe<Array<Scalars['Time']['input']>>;
  /** id field predicates */
  id?: InputMaybe<Scalars['ID']['input']>;
  idContainsFold?: InputMaybe<Scalars['ID']['input']>;
  idEqualFold?: InputMaybe<Scalars['ID']['input']>;
  idGT?: InputMaybe<Scalars['ID']['input']>;
  idGTE?: InputMaybe<Scalars['ID']['input']>;
  idIn?: InputMaybe<Array<Scalars['ID']['input']>>;
  idLT?: InputMaybe<Scalars['ID']['input']>;
  idLTE?: InputMaybe<Scalars['ID']['input']>;
  idNEQ?: InputMaybe<Scalars['ID']['input']>;
  idNotIn?: InputMaybe<Array<Scalars['ID']['input']>>;
  not?: InputMaybe<EventWhereInput>;
  /** object_id field predicates */
  objectID?: InputMaybe<Scalars['String']['input']>;
  objectIDContains?: InputMaybe<Scalars['String']['input']>;
  objectIDContainsFold?: InputMaybe<Scalars['String']['input']>;
  objectIDEqualFold?: InputMaybe<Scalars['String']['input']>;
  objectIDGT?: InputMaybe<Scalars['String']['input']>;
  objectIDGTE?: InputMaybe<Scalars['String']['input']>;
  objectIDHasPrefix?: InputMaybe<Scalars['String']['input']>;
  objectIDHasSuffix?: InputMaybe<Scalars['String']['input']>;
  objectIDIn?: InputMaybe<Array<Scalars['String']['input']>>;
  objectIDLT?: InputMaybe<Scalars['String']['input']>;
  objectIDLTE?: InputMaybe<Scalars['String']['input']>;
  objectIDNEQ?: InputMaybe<Scalars['String']['input']>;
  objectIDNotIn?: InputMaybe<Array<Scalars['String']['input']>>;
  or?: InputMaybe<Array<EventWhereInput>>;
  /** type field predicates */
  type?: InputMaybe<Scalars['String']['input']>;
  typeContains?: InputMaybe<Scalars['String']['input']>;
  typeContainsFold?: InputMaybe<Scalars['String']['input']>;
  typeEqualFold?: InputMaybe<Scalars['String']['input']>;
  typeGT?: InputMaybe<Scalars['String']['input']>;
  typeGTE?: InputMaybe<Scalars['String']['input']>;
  typeHasPrefix?: InputMaybe<Scalars['String']['input']>;
  typeHasSuffix?: InputMaybe<Scalars['String']['input']>;
  typeIn?: InputMaybe<Array<Scalars['String']['input']>>;
  typeLT?: InputMaybe<Scalars['String']['input']>;
  typeLTE?: InputMaybe<Scalars['String']['input']>;
  typeNEQ?: InputMaybe<Scalars['String']['input']>;
  typeNotIn?: InputMaybe<Array<Scalars['String']['input']>>;
};

export type LoginInput = {
  email: Scalars['String']['input'];
  password: Scalars['String']['input'];
};

/** A business that takes payments through Paygate. It owns its payments, refunds, events, webhook endpoints, users and API keys, and sees no other merchant's. */
export type Merchant = {
  __typename?: 'Merchant';
  createdAt: Scalars['Time']['output'];
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
  /** active or disabled: a disabled merchant's tokens and keys stop working on every server within a second. */
  status: Scalars['String']['output'];
};

/** A page of merchants, oldest first. */
export type MerchantPage = {
  __typename?: 'MerchantPage';
  /** Whether more merchants lie beyond the page in the direction it was read: after it for first, before it for last. */
  hasMore: Scalars['Boolean']['output'];
  merchants: Array<Merchant>;
};

export type Mutation = {
  __typename?: 'Mutation';
  /** Marks an open alert as seen by the caller: someone is on it. */
  acknowledgeAlert: Alert;
  /** Cancels an authorised (REQUIRES_CAPTURE) or unauthenticated (REQUIRES_ACTION) payment, releasing the amount. */
  cancelPayment: Payment;
  /**
   * Captures all or part of an authorised (REQUIRES_CAPTURE) payment, once. The payment comes back
   * SUCCEEDED, or PROCESSING while a provider that confirms captures later (Adyen, Checkout.com)
   * does so.
   */
  capturePayment: Payment;
  /**
   * Changes the caller's own password, given the current one, and ends every other session of the
   * caller (their access and refresh tokens): at once on this server, within a second on the others.
   * The session asking goes on. A wrong currentPassword is invalid_credentials, throttled as logins
   * are; an API key, which has no password, is forbidden. One per request, as login.
   */
  changePassword: PasswordChanged;
  /** Makes an API key for the caller's user. */
  createAPIKey: NewApiKey;
  /** Makes a merchant. Platform staff then act for it (the Paygate-Merchant header) to make its first admin. */
  createMerchant: Merchant;
  /**
   * Charges a card. A declined card is not an error: the payment comes back FAILED with its
   * failureCode.
   */
  createPayment: Payment;
  createUser: User;
  /** Makes a webhook endpoint, enabled; its secret is answered here only. At most 16 exist at once. */
  createWebhookEndpoint: WebhookEndpointWithSecret;
  /** Deletes a webhook endpoint with its deliveries; the endpoint as it was is answered. */
  deleteWebhookEndpoint: WebhookEndpoint;
  login: AuthPayload;
  /** Ends the caller's session (its access tokens and refresh tokens), and refreshToken's session too when given. */
  logout: Revoked;
  refreshToken: AuthPayload;
  /**
   * Refunds part or all of a succeeded payment through its provider. Several partial refunds may
   * follow each other up to the amount paid.
   */
  refundPayment: Refund;
  /**
   * Sets a user's password and ends every session of theirs; their API keys, which are no sessions,
   * go on. One per request, as login.
   */
  resetPassword: PasswordChanged;
  /** Closes an alert; a rule that finds its condition again raises a new one. */
  resolveAlert: Alert;
  /**
   * Sends a delivery again now: a delivered or failed one is queued afresh (its tries counted from
   * 0, its log kept); a pending one is made due now.
   */
  retryWebhookDelivery: WebhookDelivery;
  /**
   * Requeues a failed or dead event for the worker: received again, its attempts counted from 0,
   * due now. Its last error and its attempt log are kept. Any other event is refused (invalid_state).
   */
  retryWebhookEvent: WebhookEvent;
  /** Revokes a key: at once on this server, within a second on every other. */
  revokeAPIKey: ApiKey;
  /** Revokes an access token (that token) or a refresh token (its whole session); the token's owner or an admin may. */
  revokeToken: Revoked;
  /**
   * Gives a webhook endpoint a new secret, answered here only. For 24 hours the old one signs beside
   * it (two v1 entries in webhook-signature), so the endpoint can take up the new one without
   * missing a delivery.
   */
  rotateWebhookEndpointSecret: WebhookEndpointWithSecret;
  /**
   * Sends one test event, signed the Standard Webhooks way (webhook-id, webhook-timestamp,
   * webhook-signature: v1,BASE64) so any Standard Webhooks library verifies it, and answers what
   * came back: to a webhook endpoint (endpointId) as one of its deliveries, logged and retried as
   * every delivery is, or once to url. In production, the address must be public.
   */
  sendTestWebhook: TestWebhookDelivery;
  /** Makes the payment's provider's sandbox send a signed webhook event about it. */
  simulateEvent: SimulatedEvent;
  /** Replaces the runtime configuration with a new version, in force on every server within seconds. */
  updateConfig: Config;
  /** Renames, disables or enables a merchant. Platform staff cannot disable their own. */
  updateMerchant: Merchant;
  /** Changes a user's role or disables them; either revokes every token they hold. The last admin can be neither demoted nor disabled. */
  updateUser: User;
  /** Changes a webhook endpoint. Enabling it sends the deliveries that waited meanwhile. */
  updateWebhookEndpoint: WebhookEndpoint;
};


export type MutationAcknowledgeAlertArgs = {
  id: Scalars['ID']['input'];
};


export type MutationCancelPaymentArgs = {
  input: CancelPaymentInput;
};


export type MutationCapturePaymentArgs = {
  input: CapturePaymentInput;
};


export type MutationChangePasswordArgs = {
  input: ChangePasswordInput;
};


export type MutationCreateApiKeyArgs = {
  input: CreateApiKeyInput;
};


export type MutationCreateMerchantArgs = {
  input: CreateMerchantInput;
};


export type MutationCreatePaymentArgs = {
  input: CreatePaymentInput;
};


export type MutationCreateUserArgs = {
  input: CreateUserInput;
};


export type MutationCreateWebhookEndpointArgs = {
  input: CreateWebhookEndpointInput;
};


export type MutationDeleteWebhookEndpointArgs = {
  id: Scalars['ID']['input'];
};


export type MutationLoginArgs = {
  input: LoginInput;
};


export type MutationLogoutArgs = {
  refreshToken?: InputMaybe<Scalars['String']['input']>;
};


export type MutationRefreshTokenArgs = {
  refreshToken: Scalars['String']['input'];
};


export type MutationRefundPaymentArgs = {
  input: RefundPaymentInput;
};


export type MutationResetPasswordArgs = {
  id: Scalars['ID']['input'];
  input: ResetPasswordInput;
};


export type MutationResolveAlertArgs = {
  id: Scalars['ID']['input'];
};


export type MutationRetryWebhookDeliveryArgs = {
  endpointId: Scalars['ID']['input'];
  id: Scalars['ID']['input'];
};


export type MutationRetryWebhookEventArgs = {
  id: Scalars['ID']['input'];
};


export type MutationRevokeApiKeyArgs = {
  id: Scalars['ID']['input'];
};


export type MutationRevokeTokenArgs = {
  token: Scalars['String']['input'];
};


export type MutationRotateWebhookEndpointSecretArgs = {
  id: Scalars['ID']['input'];
};


export type MutationSendTestWebhookArgs = {
  input: SendTestWebhookInput;
};


export type MutationSimulateEventArgs = {
  input: SimulateEventInput;
};


export type MutationUpdateConfigArgs = {
  input: ConfigInput;
};


export type MutationUpdateMerchantArgs = {
  id: Scalars['ID']['input'];
  input: UpdateMerchantInput;
};


export type MutationUpdateUserArgs = {
  id: Scalars['ID']['input'];
  input: UpdateUserInput;
};


export type MutationUpdateWebhookEndpointArgs = {
  id: Scalars['ID']['input'];
  input: UpdateWebhookEndpointInput;
};

/** A key just made: key is shown this once, and kept only as a hash. */
export type NewApiKey = {
  __typename?: 'NewAPIKey';
  apiKey: ApiKey;
  key: Scalars['String']['output'];
};

/**
 * A step the shopper takes before the payment goes on. type is redirect_to_url: send the shopper's
 * browser to redirectToUrl.url, the provider's authentication page (3-D Secure). It comes back to
 * Paygate, which settles the payment and sends the browser on to redirectToUrl.returnUrl with
 * payment_id and status added to its query.
 */
export type NextAction = {
  __typename?: 'NextAction';
  redirectToUrl: RedirectToUrl;
  type: Scalars['String']['output'];
};

/**
 * An object with an ID.
 * Follows the [Relay Global Object Identification Specification](https://relay.dev/graphql/objectidentification.htm)
 */
export type Node = {
  /** The id of the object. */
  id: Scalars['ID']['output'];
};

/** Possible directions in which to order a list of items when provided an `orderBy` argument. */
export type OrderDirection =
  /** Specifies an ascending order for a given `orderBy` argument. */
  | 'ASC'
  /** Specifies a descending order for a given `orderBy` argument. */
  | 'DESC';

/**
 * How payments went over a period, step by step: what a dashboard draws. Platform-wide, unless
 * platform staff act for one merchant (Paygate-Merchant).
 */
export type Overview = {
  __typename?: 'Overview';
  /** Why the payments made within the period failed, most first. */
  declineReasons: Array<ReasonCount>;
  /** The start of the first step. */
  from: Scalars['Time']['output'];
  period: OverviewPeriod;
  /** Every provider asked to charge within the period, by name. */
  providers: Array<ProviderSeries>;
  /** How long each step is, in seconds. */
  stepS: Scalars['Int']['output'];
  steps: Array<OverviewStep>;
  /** The end of the step now is in: the last step is still filling. */
  to: Scalars['Time']['output'];
};

/** A span of time the overview covers, cut into equal steps. */
export type OverviewPeriod =
  /** The last 24 hours, hour by hour. */
  | 'DAY'
  /** The last 30 days, day by day (UTC days). */
  | 'MONTH'
  /** The last 7 days, in steps of 6 hours. */
  | 'WEEK';

/** One step of an overview: the payments made in it and the refunds asked in it. */
export type OverviewStep = {
  __typename?: 'OverviewStep';
  /** approved / (approved + declined); null when no charge was decided. */
  approvalRate: Maybe<Scalars['Float']['output']>;
  /** Charges a provider approved when asked. */
  approved: Scalars['Int']['output'];
  /** Charges a provider declined when asked. A charge that asked for 3-D Secure is decided after the shopper's return and counts in neither. */
  declined: Scalars['Int']['output'];
  payments: Scalars['Int']['output'];
  /** The refunds asked in the step that did not fail, by currency; every currency of the period is listed. */
  refunds: Array<RefundTotal>;
  start: Scalars['Time']['output'];
  /** What the payments made in the step captured, by currency; refunds are apart. Every currency of the period is listed, at 0.00 when the step has none of it. */
  volume: Array<CurrencyVolume>;
};

/**
 * Information about pagination in a connection.
 * https://relay.dev/graphql/connections.htm#sec-undefined.PageInfo
 */
export type PageInfo = {
  __typename?: 'PageInfo';
  /** When paginating forwards, the cursor to continue. */
  endCursor: Maybe<Scalars['Cursor']['output']>;
  /** When paginating forwards, are there more items? */
  hasNextPage: Scalars['Boolean']['output'];
  /** When paginating backwards, are there more items? */
  hasPreviousPage: Scalars['Boolean']['output'];
  /** When paginating backwards, the cursor to continue. */
  startCursor: Maybe<Scalars['Cursor']['output']>;
};

/** What changePassword and resetPassword answer once the new password is in force. */
export type PasswordChanged = {
  __typename?: 'PasswordChanged';
  changed: Scalars['Boolean']['output'];
};

export type Payment = Node & {
  __typename?: 'Payment';
  amount: Scalars['Decimal']['output'];
  /** What an authorisation holds and may still be captured (manual capture); 0 otherwise. */
  amountCapturable: Scalars['Decimal']['output'];
  /** What was captured: the amount, for a payment captured at once. Refunds give back at most this. */
  amountCaptured: Scalars['Decimal']['output'];
  amountRefunded: Scalars['Decimal']['output'];
  canceledAt: Maybe<Scalars['Time']['output']>;
  cancellationReason: Maybe<CancellationReason>;
  captureBefore: Maybe<Scalars['Time']['output']>;
  captureMethod: CaptureMethod;
  card: Card;
  createdAt: Scalars['Time']['output'];
  currency: Scalars['String']['output'];
  customer: Customer;
  description: Maybe<Scalars['String']['output']>;
  disputeReason: Maybe<Scalars['String']['output']>;
  disputedAt: Maybe<Scalars['Time']['output']>;
  failureCode: Maybe<Scalars['String']['output']>;
  failureMessage: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  /** The merchant whose payment it is. */
  merchantId: Scalars['ID']['output'];
  metadata: Scalars['StringMap']['output'];
  /** What the shopper must do before the payment can go on: set while it is REQUIRES_ACTION. */
  nextAction: Maybe<NextAction>;
  paymentMethod: PaymentMethod;
  provider: Scalars['String']['output'];
  /** The decline as the provider gave it (Stripe's decline_code, Adyen's refusal reason code, Checkout.com's response code). */
  providerDeclineCode: Maybe<Scalars['String']['output']>;
  providerPaymentId: Maybe<Scalars['String']['output']>;
  refunds: Array<Refund>;
  /** The merchant's page the shopper's browser goes back to after authenticating (3-D Secure). */
  returnUrl: Maybe<Scalars['String']['output']>;
  reversalFailureMessage: Maybe<Scalars['String']['output']>;
  reversalStatus: Maybe<ReversalStatus>;
  routing: Maybe<Routing>;
  status: PaymentStatus;
  statusHistory: Array<StatusChange>;
  updatedAt: Scalars['Time']['output'];
};

/** A connection to a list of items. */
export type PaymentConnection = {
  __typename?: 'PaymentConnection';
  /** A list of edges. */
  edges: Array<PaymentEdge>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
  /** Identifies the total count of items in the connection. */
  totalCount: Scalars['Int']['output'];
};

/** An edge in a connection. */
export type PaymentEdge = {
  __typename?: 'PaymentEdge';
  /** A cursor for use in pagination. */
  cursor: Scalars['Cursor']['output'];
  /** The item at the end of the edge. */
  node: Payment;
};

export type PaymentMethod =
  | 'CREDIT_CARD';

export type PaymentMetrics = {
  __typename?: 'PaymentMetrics';
  /** Payments made within the window, by status. */
  byStatus: Array<StatusCount>;
  /** What the payments made within the window took net of refunds, by currency: the amount captured less the amount refunded (succeeded refunds). Every currency with a payment in the window is listed, at 0.00 when nothing of it is kept (authorised only, failed, canceled or refunded in full). */
  volume: Array<CurrencyVolume>;
};

/** Ordering options for Payment connections */
export type PaymentOrder = {
  /** The ordering direction. */
  direction?: OrderDirection;
  /** The field by which to order Payments. */
  field: PaymentOrderField;
};

/** Properties by which Payment connections can be ordered. */
export type PaymentOrderField =
  | 'AMOUNT'
  | 'CREATED_AT';

/**
 * Where a payment is. PROCESSING: with its provider, or its outcome unknown until the provider's
 * webhook or reconciliation settles it. REQUIRES_ACTION: the shopper must authenticate (3-D
 * Secure). REQUIRES_CAPTURE: authorised and held, to be captured or canceled. CANCELED: voided,
 * abandoned or expired; nothing was taken.
 */
export type PaymentStatus =
  | 'CANCELED'
  | 'FAILED'
  | 'PARTIALLY_REFUNDED'
  | 'PENDING'
  | 'PROCESSING'
  | 'REFUNDED'
  | 'REQUIRES_ACTION'
  | 'REQUIRES_CAPTURE'
  | 'SUCCEEDED';

/**
 * PaymentWhereInput is used for filtering Payment objects.
 * Input was generated by ent.
 */
export type PaymentWhereInput = {
  /** amount field predicates */
  amount?: InputMaybe<Scalars['Int']['input']>;
  amountGT?: InputMaybe<Scalars['Int']['input']>;
  amountGTE?: InputMaybe<Scalars['Int']['input']>;
  amountIn?: InputMaybe<Array<Scalars['Int']['input']>>;
  amountLT?: InputMaybe<Scalars['Int']['input']>;
  amountLTE?: InputMaybe<Scalars['Int']['input']>;
  amountNEQ?: InputMaybe<Scalars['Int']['input']>;
  amountNotIn?: InputMaybe<Array<Scalars['Int']['input']>>;
  and?: InputMaybe<Array<PaymentWhereInput>>;
  /** capture_method field predicates */
  captureMethod?: InputMaybe<CaptureMethod>;
  captureMethodIn?: InputMaybe<Array<CaptureMethod>>;
  captureMethodNEQ?: InputMaybe<CaptureMethod>;
  captureMethodNotIn?: InputMaybe<Array<CaptureMethod>>;
  /** card_last4 field predicates */
  cardLast4?: InputMaybe<Scalars['String']['input']>;
  cardLast4Contains?: InputMaybe<Scalars['String']['input']>;
  cardLast4ContainsFold?: InputMaybe<Scalars['String']['input']>;
  cardLast4EqualFold?: InputMaybe<Scalars['String']['input']>;
  cardLast4GT?: InputMaybe<Scalars['String']['input']>;
  cardLast4GTE?: InputMaybe<Scalars['String']['input']>;
  cardLast4HasPrefix?: InputMaybe<Scalars['String']['input']>;
  cardLast4HasSuffix?: InputMaybe<Scalars['String']['input']>;
  cardLast4In?: InputMaybe<Array<Scalars['String']['input']>>;
  cardLast4LT?: InputMaybe<Scalars['String']['input']>;
  cardLast4LTE?: InputMaybe<Scalars['String']['input']>;
  cardLast4NEQ?: InputMaybe<Scalars['String']['input']>;
  cardLast4NotIn?: InputMaybe<Array<Scalars['String']['input']>>;
  /** created_at field predicates */
  createdAt?: InputMaybe<Scalars['Time']['input']>;
  createdAtGT?: InputMaybe<Scalars['Time']['input']>;
  createdAtGTE?: InputMaybe<Scalars['Time']['input']>;
  createdAtIn?: InputMaybe<Array<Scalars['Time']['input']>>;
  createdAtLT?: InputMaybe<Scalars['Time']['input']>;
  createdAtLTE?: InputMaybe<Scalars['Time']['input']>;
  createdAtNEQ?: InputMaybe<Scalars['Time']['input']>;
  createdAtNotIn?: InputMaybe<Array<Scalars['Time']['input']>>;
  /** currency field predicates */
  currency?: InputMaybe<Scalars['String']['input']>;
  currencyContains?: InputMaybe<Scalars['String']['input']>;
  currencyContainsFold?: InputMaybe<Scalars['String']['input']>;
  currencyEqualFold?: InputMaybe<Scalars['String']['input']>;
  currencyGT?: InputMaybe<Scalars['String']['input']>;
  currencyGTE?: InputMaybe<Scalars['String']['input']>;
  currencyHasPrefix?: InputMaybe<Scalars['String']['input']>;
  currencyHasSuffix?: InputMaybe<Scalars['String']['input']>;
  currencyIn?: InputMaybe<Array<Scalars['String']['input']>>;
  currencyLT?: InputMaybe<Scalars['String']['input']>;
  currencyLTE?: InputMaybe<Scalars['String']['input']>;
  currencyNEQ?: InputMaybe<Scalars['String']['input']>;
  currencyNotIn?: InputMaybe<Array<Scalars['String']['input']>>;
  /** customer_email field predicates */
  customerEmail?: InputMaybe<Scalars['String']['input']>;
  customerEmailContains?: InputMaybe<Scalars['String']['input']>;
  customerEmailContainsFold?: InputMaybe<Scalars['String']['input']>;
  customerEmailEqualFold?: InputMaybe<Scalars['String']['input']>;
  customerEmailGT?: InputMaybe<Scalars['String']['input']>;
  customerEmailGTE?: InputMaybe<Scalars['String']['input']>;
  customerEmailHasPrefix?: InputMaybe<Scalars['String']['input']>;
  customerEmailHasSuffix?: InputMaybe<Scalars['String']['input']>;
  customerEmailIn?: InputMaybe<Array<Scalars['String']['input']>>;
  customerEmailLT?: InputMaybe<Scalars['String']['input']>;
  customerEmailLTE?: InputMaybe<Scalars['String']['input']>;
  customerEmailNEQ?: InputMaybe<Scalars['String']['input']>;
  customerEmailNotIn?: InputMaybe<Array<Scalars['String']['input']>>;
  /** failure_code field predicates */
  failureCode?: InputMaybe<Scalars['String']['input']>;
  failureCodeContains?: InputMaybe<Scalars['String']['input']>;
  failureCodeContainsFold?: InputMaybe<Scalars['String']['input']>;
  failureCodeEqualFold?: InputMaybe<Scalars['String']['input']>;
  failureCodeGT?: InputMaybe<Scalars['String']['input']>;
  failureCodeGTE?: InputMaybe<Scalars['String']['input']>;
  failureCodeHasPrefix?: InputMaybe<Scalars['String']['input']>;
  failureCodeHasSuffix?: InputMaybe<Scalars['String']['input']>;
  failureCodeIn?: InputMaybe<Array<Scalars['String']['input']>>;
  failureCodeIsNil?: InputMaybe<Scalars['Boolean']['input']>;
  failureCodeLT?: InputMaybe<Scalars['String']['input']>;
  failureCodeLTE?: InputMaybe<Scalars['String']['input']>;
  failureCodeNEQ?: InputMaybe<Scalars['String']['input']>;
  failureCodeNotIn?: InputMaybe<Array<Scalars['String']['input']>>;
  failureCodeNotNil?: InputMaybe<Scalars['Boolean']['input']>;
  /** id field predicates */
  id?: InputMaybe<Scalars['ID']['input']>;
  idContainsFold?: InputMaybe<Scalars['ID']['input']>;
  idEqualFold?: InputMaybe<Scalars['ID']['input']>;
  idGT?: InputMaybe<Scalars['ID']['input']>;
  idGTE?: InputMaybe<Scalars['ID']['input']>;
  idIn?: InputMaybe<Array<Scalars['ID']['input']>>;
  idLT?: InputMaybe<Scalars['ID']['input']>;
  idLTE?: InputMaybe<Scalars['ID']['input']>;
  idNEQ?: InputMaybe<Scalars['ID']['input']>;
  idNotIn?: InputMaybe<Array<Scalars['ID']['input']>>;
  not?: InputMaybe<PaymentWhereInput>;
  or?: InputMaybe<Array<PaymentWhereInput>>;
  /** provider field predicates */
  provider?: InputMaybe<Scalars['String']['input']>;
  providerContains?: InputMaybe<Scalars['String']['input']>;
  providerContainsFold?: InputMaybe<Scalars['String']['input']>;
  providerEqualFold?: InputMaybe<Scalars['String']['input']>;
  providerGT?: InputMaybe<Scalars['String']['input']>;
  providerGTE?: InputMaybe<Scalars['String']['input']>;
  providerHasPrefix?: InputMaybe<Scalars['String']['input']>;
  providerHasSuffix?: InputMaybe<Scalars['String']['input']>;
  providerIn?: InputMaybe<Array<Scalars['String']['input']>>;
  providerLT?: InputMaybe<Scalars['String']['input']>;
  providerLTE?: InputMaybe<Scalars['String']['input']>;
  providerNEQ?: InputMaybe<Scalars['String']['input']>;
  providerNotIn?: InputMaybe<Array<Scalars['String']['input']>>;
  /** status field predicates */
  status?: InputMaybe<PaymentStatus>;
  statusIn?: InputMaybe<Array<PaymentStatus>>;
  statusNEQ?: InputMaybe<PaymentStatus>;
  statusNotIn?: InputMaybe<Array<PaymentStatus>>;
};

/** One provider's charge calls over an overview's period, step by step. */
export type ProviderSeries = {
  __typename?: 'ProviderSeries';
  provider: Scalars['String']['output'];
  steps: Array<ProviderStep>;
};

export type ProviderSettings = {
  __typename?: 'ProviderSettings';
  enabled: Scalars['Boolean']['output'];
  name: Scalars['String']['output'];
  /** How long a call to the provider may take, in milliseconds. */
  timeoutMs: Scalars['Int']['output'];
};

export type ProviderSettingsInput = {
  enabled: Scalars['Boolean']['input'];
  name: Scalars['String']['input'];
  timeoutMs: Scalars['Int']['input'];
};

/** How a payment provider is doing, from the calls this server made to it since it started. */
export type ProviderStatus = {
  __typename?: 'ProviderStatus';
  /** The share of the charges it decided when asked (approved or declined) that it approved: declines count against it, outages do not, nor a decision after 3-D Secure; null before any decision. */
  approvalRate: Maybe<Scalars['Float']['output']>;
  /** closed (in use), open (passed over after failing) or half_open (one call out to probe it). */
  circuit: Scalars['String']['output'];
  /** Whether the configuration in force lets payments go to it. */
  enabled: Scalars['Boolean']['output'];
  lastError: Maybe<Scalars['String']['output']>;
  lastErrorAt: Maybe<Scalars['Time']['output']>;
  p50Ms: Maybe<Scalars['Float']['output']>;
  p99Ms: Maybe<Scalars['Float']['output']>;
  provider: Scalars['String']['output'];
  requests: Scalars['Int']['output'];
  /** Its availability: the share of calls it answered (approved, declined, refund taken); null before any call. */
  successRate: Maybe<Scalars['Float']['output']>;
};

/** A provider's charge calls in a step. Latencies are rounded down to two significant figures. */
export type ProviderStep = {
  __typename?: 'ProviderStep';
  calls: Scalars['Int']['output'];
  /** errors / calls; null when there was no call. */
  errorRate: Maybe<Scalars['Float']['output']>;
  /** Calls that failed: the provider was unavailable, or its answer was lost. */
  errors: Scalars['Int']['output'];
  p50Ms: Maybe<Scalars['Int']['output']>;
  p95Ms: Maybe<Scalars['Int']['output']>;
  start: Scalars['Time']['output'];
};

export type Query = {
  __typename?: 'Query';
  alerts: AlertConnection;
  /**
   * Every merchant's payments in one list, for platform staff whichever merchant they act for: as
   * payments lists one merchant's, each with its merchantId; everything below a payment is read
   * across merchants too.
   */
  allPayments: PaymentConnection;
  /**
   * The caller's API keys (everyone's for those who manage users), oldest first (by id): the first of
   * them (20 by default) or the last, 1 to 100, of those whose ids lie after the id after and before
   * the id before, each left out for no bound.
   */
  apiKeys: ApiKeyPage;
  /** The runtime configuration in force. */
  config: Config;
  /** Versions of the runtime configuration, newest first: first of them (20 by default, at most 100), older than version before. */
  configHistory: Array<ConfigChange>;
  /** One event, kept 30 days. */
  event: Maybe<Event>;
  events: EventConnection;
  /**
   * Merchants, oldest first (by id): the first of them (20 by default) or the last, 1 to 100, of
   * those whose ids lie after the id after and before the id before, each left out for no bound.
   * Platform staff only.
   */
  merchants: MerchantPage;
  /** Fetches an object given its ID. */
  node: Maybe<Node>;
  /** Lookup nodes by a list of IDs. */
  nodes: Array<Maybe<Node>>;
  /** How payments went over the last day, week or month, step by step. */
  overview: Overview;
  payment: Maybe<Payment>;
  /** Payments, newest first (createdAt, then id, descending) unless orderBy says otherwise, as REST lists them. */
  payments: PaymentConnection;
  providerStatus: Array<ProviderStatus>;
  refund: Maybe<Refund>;
  systemMetrics: SystemMetrics;
  /**
   * Users, oldest first (by id): the first of them (20 by default) or the last, 1 to 100, of those
   * whose ids lie after the id after and before the id before, each left out for no bound.
   */
  users: UserPage;
  /** Who the request's credential is, and what it may do. */
  viewer: Viewer;
  /** A page of one endpoint's deliveries, newest first, of one status or all. */
  webhookDeliveries: WebhookDeliveryConnection;
  /** One webhook endpoint. */
  webhookEndpoint: Maybe<WebhookEndpoint>;
  webhookEndpoints: WebhookEndpointConnection;
  /** One webhook event with its attempts, oldest first. */
  webhookEvent: Maybe<WebhookEvent>;
  webhookEvents: WebhookEventConnection;
  /** Each provider's webhook figures, in the providers' order. */
  webhookMetrics: Array<WebhookProviderMetrics>;
};


export type QueryAlertsArgs = {
  after?: InputMaybe<Scalars['Cursor']['input']>;
  before?: InputMaybe<Scalars['Cursor']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
  orderBy?: InputMaybe<AlertOrder>;
  where?: InputMaybe<AlertWhereInput>;
};


export type QueryAllPaymentsArgs = {
  after?: InputMaybe<Scalars['Cursor']['input']>;
  before?: InputMaybe<Scalars['Cursor']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
  orderBy?: InputMaybe<PaymentOrder>;
  where?: InputMaybe<PaymentWhereInput>;
};


export type QueryApiKeysArgs = {
  after?: InputMaybe<Scalars['ID']['input']>;
  before?: InputMaybe<Scalars['ID']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryConfigHistoryArgs = {
  before?: InputMaybe<Scalars['Int']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryEventArgs = {
  id: Scalars['ID']['input'];
};


export type QueryEventsArgs = {
  after?: InputMaybe<Scalars['Cursor']['input']>;
  before?: InputMaybe<Scalars['Cursor']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
  orderBy?: InputMaybe<EventOrder>;
  where?: InputMaybe<EventWhereInput>;
};


export type QueryMerchantsArgs = {
  after?: InputMaybe<Scalars['ID']['input']>;
  before?: InputMaybe<Scalars['ID']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryNodeArgs = {
  id: Scalars['ID']['input'];
};


export type QueryNodesArgs = {
  ids: Array<Scalars['ID']['input']>;
};


export type QueryOverviewArgs = {
  period?: OverviewPeriod;
};


export type QueryPaymentArgs = {
  id: Scalars['ID']['input'];
};


export type QueryPaymentsArgs = {
  after?: InputMaybe<Scalars['Cursor']['input']>;
  before?: InputMaybe<Scalars['Cursor']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
  orderBy?: InputMaybe<PaymentOrder>;
  where?: InputMaybe<PaymentWhereInput>;
};


export type QueryRefundArgs = {
  id: Scalars['ID']['input'];
};


export type QueryUsersArgs = {
  after?: InputMaybe<Scalars['ID']['input']>;
  before?: InputMaybe<Scalars['ID']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryWebhookDeliveriesArgs = {
  after?: InputMaybe<Scalars['Cursor']['input']>;
  before?: InputMaybe<Scalars['Cursor']['input']>;
  endpointId: Scalars['ID']['input'];
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
  status?: InputMaybe<WebhookDeliveryStatus>;
};


export type QueryWebhookEndpointArgs = {
  id: Scalars['ID']['input'];
};


export type QueryWebhookEndpointsArgs = {
  after?: InputMaybe<Scalars['Cursor']['input']>;
  before?: InputMaybe<Scalars['Cursor']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
  orderBy?: InputMaybe<WebhookEndpointOrder>;
};


export type QueryWebhookEventArgs = {
  id: Scalars['ID']['input'];
};


export type QueryWebhookEventsArgs = {
  after?: InputMaybe<Scalars['Cursor']['input']>;
  before?: InputMaybe<Scalars['Cursor']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
  orderBy?: InputMaybe<WebhookEventOrder>;
  where?: InputMaybe<WebhookEventWhereInput>;
};

export type RateLimitSettings = {
  __typename?: 'RateLimitSettings';
  burst: Scalars['Int']['output'];
  loginPerMinute: Scalars['Int']['output'];
  perSecond: Scalars['Int']['output'];
};

export type RateLimitsInput = {
  burst: Scalars['Int']['input'];
  loginPerMinute: Scalars['Int']['input'];
  perSecond: Scalars['Int']['input'];
};

/** How many payments failed for a reason: a decline's code, or why no provider decided (provider_unavailable, authentication_failed ...). */
export type ReasonCount = {
  __typename?: 'ReasonCount';
  count: Scalars['Int']['output'];
  reason: Scalars['String']['output'];
};

export type RedirectToUrl = {
  __typename?: 'RedirectToUrl';
  returnUrl: Maybe<Scalars['String']['output']>;
  url: Scalars['String']['output'];
};

export type Refund = Node & {
  __typename?: 'Refund';
  amount: Scalars['Decimal']['output'];
  createdAt: Scalars['Time']['output'];
  currency: Scalars['String']['output'];
  failureCode: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  payment: Payment;
  /** The ID of the payment refunded, without loading it. */
  paymentId: Scalars['ID']['output'];
  reason: Maybe<Scalars['String']['output']>;
  status: RefundStatus;
  updatedAt: Scalars['Time']['output'];
};

export type RefundPaymentInput = {
  /** The amount to give back; omitted, all that is left. */
  amount?: InputMaybe<Scalars['Decimal']['input']>;
  /** As in CreatePaymentInput. */
  idempotencyKey?: InputMaybe<Scalars['String']['input']>;
  paymentId: Scalars['ID']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};

export type RefundStatus =
  | 'FAILED'
  | 'PENDING'
  | 'SUCCEEDED';

export type RefundTotal = {
  __typename?: 'RefundTotal';
  amount: Scalars['Decimal']['output'];
  count: Scalars['Int']['output'];
  currency: Scalars['String']['output'];
};

/** This server's API requests since it started. */
export type RequestMetrics = {
  __typename?: 'RequestMetrics';
  /** Requests answered with a server error (5xx). */
  errors: Scalars['Int']['output'];
  /** Over the latest 1024 requests; null before any. */
  p50Ms: Maybe<Scalars['Float']['output']>;
  p99Ms: Maybe<Scalars['Float']['output']>;
  /** The mean over the last minute. */
  perSecond: Scalars['Float']['output'];
  total: Scalars['Int']['output'];
};

export type ResetPasswordInput = {
  /** As changePassword's newPassword. */
  newPassword: Scalars['String']['input'];
};

/**
 * Where Paygate is in undoing what a payment's provider approved after the payment was canceled
 * while it waited for its shopper (the payment stays CANCELED): PENDING while it voids or refunds it
 * at the provider; VOIDED or REFUNDED once the provider took that; FAILED when the provider refused
 * it or could not be reached for too long, and the money may still be taken (an alert is raised).
 */
export type ReversalStatus =
  | 'FAILED'
  | 'PENDING'
  | 'REFUNDED'
  | 'VOIDED';

/** What logout and revokeToken answer once the revocation is in force. */
export type Revoked = {
  __typename?: 'Revoked';
  revoked: Scalars['Boolean']['output'];
};

/**
 * How a payment was routed: the rule that matched (null when none did and the fallback order stood)
 * and every provider asked to charge it, in order.
 */
export type Routing = {
  __typename?: 'Routing';
  attempts: Array<RoutingAttempt>;
  rule: Maybe<Scalars['String']['output']>;
};

/** One provider asked to charge a payment. */
export type RoutingAttempt = {
  __typename?: 'RoutingAttempt';
  latencyMs: Scalars['Int']['output'];
  /**
   * approved, declined, unavailable (the provider did nothing, so the next one was asked) or
   * unknown (its answer was lost; the payment stays processing until it is reconciled).
   */
  outcome: Scalars['String']['output'];
  provider: Scalars['String']['output'];
};

export type RoutingInput = {
  fallback: Array<Scalars['String']['input']>;
  rules: Array<RoutingRuleInput>;
};

/** A rule matches the payments that meet all of its conditions; a condition left null matches any. */
export type RoutingRule = {
  __typename?: 'RoutingRule';
  /** Lower bound of the amount, in major units of the payment's currency. */
  amountGte: Maybe<Scalars['Decimal']['output']>;
  /** Upper bound of the amount, in major units of the payment's currency. */
  amountLte: Maybe<Scalars['Decimal']['output']>;
  brand: Maybe<Array<Scalars['String']['output']>>;
  currency: Maybe<Array<Scalars['String']['output']>>;
  /** The merchants (mer_...) whose payments the rule routes. */
  merchants: Maybe<Array<Scalars['String']['output']>>;
  name: Scalars['String']['output'];
  providers: Array<WeightedProvider>;
};

export type RoutingRuleInput = {
  amountGte?: InputMaybe<Scalars['Decimal']['input']>;
  amountLte?: InputMaybe<Scalars['Decimal']['input']>;
  brand?: InputMaybe<Array<Scalars['String']['input']>>;
  currency?: InputMaybe<Array<Scalars['String']['input']>>;
  merchants?: InputMaybe<Array<Scalars['String']['input']>>;
  name: Scalars['String']['input'];
  providers: Array<WeightedProviderInput>;
};

/** The rules, tried in order: the first that matches a payment picks its providers. */
export type RoutingSettings = {
  __typename?: 'RoutingSettings';
  /** The providers tried after the rule's, in order; all of them when no rule matches. */
  fallback: Array<Scalars['String']['output']>;
  rules: Array<RoutingRule>;
};

export type RuntimeMetrics = {
  __typename?: 'RuntimeMetrics';
  goroutines: Scalars['Int']['output'];
  heapBytes: Scalars['Int']['output'];
};

/**
 * A test event to send, of type (any event type Paygate sends; payment.succeeded when left out),
 * either to a webhook endpoint (endpointId), signed with its secrets and kept in its deliveries, or
 * to url (an absolute http or https URL, at most 2048 characters) signed with secret (a Standard
 * Webhooks secret: whsec_ and the base64 of 24 to 64 bytes; when left out, Paygate makes one and
 * answers it).
 */
export type SendTestWebhookInput = {
  endpointId?: InputMaybe<Scalars['ID']['input']>;
  secret?: InputMaybe<Scalars['String']['input']>;
  type?: InputMaybe<Scalars['String']['input']>;
  url?: InputMaybe<Scalars['String']['input']>;
};

export type SimulateEventInput = {
  paymentId: Scalars['ID']['input'];
  /** The provider whose sandbox sends the event; by default the payment's. */
  provider?: InputMaybe<Scalars['String']['input']>;
  /** The provider's event type (charge.refunded, REFUND, payment_refunded, a dispute, a late failure) or refund, dispute, late_failure. */
  type: Scalars['String']['input'];
};

/** An event a provider's sandbox was made to send; it arrives through /webhooks/{provider} like any other. */
export type SimulatedEvent = {
  __typename?: 'SimulatedEvent';
  paymentId: Scalars['ID']['output'];
  provider: Scalars['String']['output'];
  type: Scalars['String']['output'];
};

export type StatusChange = Node & {
  __typename?: 'StatusChange';
  actor: Scalars['String']['output'];
  /**
   * The email of who made the change when a person did (a user, or the user of the API key used);
   * null when Paygate or a provider did, or when the caller may not know them (a merchant's people
   * know one another; platform staff know everyone).
   */
  actorEmail: Maybe<Scalars['String']['output']>;
  at: Scalars['Time']['output'];
  from: Maybe<PaymentStatus>;
  id: Scalars['ID']['output'];
  reason: Scalars['String']['output'];
  to: PaymentStatus;
};

export type StatusCount = {
  __typename?: 'StatusCount';
  count: Scalars['Int']['output'];
  status: Scalars['String']['output'];
};

/**
 * What changes as it changes, for dashboards: over WebSocket (the graphql-transport-ws protocol) or
 * Server-Sent Events (graphql-sse, distinct connections), both on /query. The credential goes in
 * connection_init's payload ({"Authorization": "Bearer ..."} or {"X-API-Key": "pk_..."}) over
 * WebSocket, in the request's headers over SSE; a WebSocket carries subscriptions only (queries and
 * mutations go over HTTP, each request authenticated and rate limited); each field needs the scope
 * its query needs. A subscriber is sent what changes after it subscribes, made through any server.
 * A subscription that ends says why: when its credential expires or is revoked, or its user or
 * merchant is disabled, a WebSocket is closed with 4403 and the error's code as the reason, and over
 * SSE an error with extensions.code comes before complete; a subscription 1,000 changes behind ends
 * with subscriber_too_slow. When the server stops, streams are aborted, not completed: subscribe
 * again. One that reconnects catches up from the events list.
 */
export type Subscription = {
  __typename?: 'Subscription';
  /** Each alert as it is raised, acknowledged or resolved. */
  alertRaised: Alert;
  /** Every merchant's payments as each change leaves them, for platform staff (allPayments live); the one with this id when given. */
  allPaymentsUpdated: Payment;
  /** The payment with this id as each change leaves it; every payment the principal may read when id is left out. */
  paymentUpdated: Payment;
  /** A provider's status on the server subscribed to, each time its circuit or figures change (at most once every 2 seconds each). */
  providerStatusChanged: ProviderStatus;
  /** Each refund as it settles (succeeded or failed); of one payment when paymentId is given. */
  refundUpdated: Refund;
};


/**
 * What changes as it changes, for dashboards: over WebSocket (the graphql-transport-ws protocol) or
 * Server-Sent Events (graphql-sse, distinct connections), both on /query. The credential goes in
 * connection_init's payload ({"Authorization": "Bearer ..."} or {"X-API-Key": "pk_..."}) over
 * WebSocket, in the request's headers over SSE; a WebSocket carries subscriptions only (queries and
 * mutations go over HTTP, each request authenticated and rate limited); each field needs the scope
 * its query needs. A subscriber is sent what changes after it subscribes, made through any server.
 * A subscription that ends says why: when its credential expires or is revoked, or its user or
 * merchant is disabled, a WebSocket is closed with 4403 and the error's code as the reason, and over
 * SSE an error with extensions.code comes before complete; a subscription 1,000 changes behind ends
 * with subscriber_too_slow. When the server stops, streams are aborted, not completed: subscribe
 * again. One that reconnects catches up from the events list.
 */
export type SubscriptionAllPaymentsUpdatedArgs = {
  id?: InputMaybe<Scalars['ID']['input']>;
};


/**
 * What changes as it changes, for dashboards: over WebSocket (the graphql-transport-ws protocol) or
 * Server-Sent Events (graphql-sse, distinct connections), both on /query. The credential goes in
 * connection_init's payload ({"Authorization": "Bearer ..."} or {"X-API-Key": "pk_..."}) over
 * WebSocket, in the request's headers over SSE; a WebSocket carries subscriptions only (queries and
 * mutations go over HTTP, each request authenticated and rate limited); each field needs the scope
 * its query needs. A subscriber is sent what changes after it subscribes, made through any server.
 * A subscription that ends says why: when its credential expires or is revoked, or its user or
 * merchant is disabled, a WebSocket is closed with 4403 and the error's code as the reason, and over
 * SSE an error with extensions.code comes before complete; a subscription 1,000 changes behind ends
 * with subscriber_too_slow. When the server stops, streams are aborted, not completed: subscribe
 * again. One that reconnects catches up from the events list.
 */
export type SubscriptionPaymentUpdatedArgs = {
  id?: InputMaybe<Scalars['ID']['input']>;
};


/**
 * What changes as it changes, for dashboards: over WebSocket (the graphql-transport-ws protocol) or
 * Server-Sent Events (graphql-sse, distinct connections), both on /query. The credential goes in
 * connection_init's payload ({"Authorization": "Bearer ..."} or {"X-API-Key": "pk_..."}) over
 * WebSocket, in the request's headers over SSE; a WebSocket carries subscriptions only (queries and
 * mutations go over HTTP, each request authenticated and rate limited); each field needs the scope
 * its query needs. A subscriber is sent what changes after it subscribes, made through any server.
 * A subscription that ends says why: when its credential expires or is revoked, or its user or
 * merchant is disabled, a WebSocket is closed with 4403 and the error's code as the reason, and over
 * SSE an error with extensions.code comes before complete; a subscription 1,000 changes behind ends
 * with subscriber_too_slow. When the server stops, streams are aborted, not completed: subscribe
 * again. One that reconnects catches up from the events list.
 */
export type SubscriptionRefundUpdatedArgs = {
  paymentId?: InputMaybe<Scalars['ID']['input']>;
};

/** What a dashboard shows: this server's requests, pool and runtime, and everyone's payments and webhook events of the last day. */
export type SystemMetrics = {
  __typename?: 'SystemMetrics';
  database: DatabaseMetrics;
  payments: PaymentMetrics;
  requests: RequestMetrics;
  runtime: RuntimeMetrics;
  /** How long this server has run, in seconds. */
  uptimeS: Scalars['Int']['output'];
  webhooks: WebhookCounts;
  /** How far back payments and webhooks reach, in hours. */
  windowH: Scalars['Int']['output'];
};

/**
 * What came of a test event. An endpoint that could not be reached is no error: statusCode is null
 * and error says what happened.
 */
export type TestWebhookDelivery = {
  __typename?: 'TestWebhookDelivery';
  /** The delivery in the endpoint's log, when the event went to an endpoint. */
  deliveryId: Maybe<Scalars['ID']['output']>;
  /** Why no answer, or no whole answer, came: a timeout, a refused connection, TLS; null when one did. */
  error: Maybe<Scalars['String']['output']>;
  /** The id of the event sent (evt_test_...). */
  eventId: Scalars['ID']['output'];
  /** How long the endpoint took to answer, or to fail. */
  latencyMs: Scalars['Int']['output'];
  /** The first KiB of the answer's body, as text, trimmed. */
  responseExcerpt: Scalars['String']['output'];
  /** The secret the event was signed with, when Paygate made it; null when the input gave one. */
  secret: Maybe<Scalars['String']['output']>;
  /** The endpoint's HTTP status; a redirect is reported, never followed. Null when no answer came. */
  statusCode: Maybe<Scalars['Int']['output']>;
};

export type UpdateMerchantInput = {
  name?: InputMaybe<Scalars['String']['input']>;
  /** active or disabled. */
  status?: InputMaybe<Scalars['String']['input']>;
};

export type UpdateUserInput = {
  disabled?: InputMaybe<Scalars['Boolean']['input']>;
  role?: InputMaybe<Scalars['String']['input']>;
};

/** Changes to a webhook endpoint; a field left out stays as it is. */
export type UpdateWebhookEndpointInput = {
  description?: InputMaybe<Scalars['String']['input']>;
  events?: InputMaybe<Array<Scalars['String']['input']>>;
  status?: InputMaybe<WebhookEndpointStatus>;
  url?: InputMaybe<Scalars['String']['input']>;
};

/** A person who uses Paygate, with a role that grants scopes. */
export type User = {
  __typename?: 'User';
  createdAt: Scalars['Time']['output'];
  /** A disabled user cannot log in, and their tokens stop working. */
  disabled: Scalars['Boolean']['output'];
  email: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  /** The merchant the user belongs to. */
  merchantId: Scalars['ID']['output'];
  /** Platform staff manage merchants, read what is platform-wide, and act for any merchant. */
  platform: Scalars['Boolean']['output'];
  /** admin, operator, developer or viewer. */
  role: Scalars['String']['output'];
};

/** A page of users, oldest first. */
export type UserPage = {
  __typename?: 'UserPage';
  /** Whether more users lie beyond the page in the direction it was read: after it for first, before it for last. */
  hasMore: Scalars['Boolean']['output'];
  users: Array<User>;
};

/** Who a request's credential is, and what it may do: for a client to offer only what it may ask. */
export type Viewer = {
  __typename?: 'Viewer';
  /** session (an access token) or api_key. */
  credential: Scalars['String']['output'];
  /** The user's email: the one signed in, or the one whose API key it is. */
  email: Scalars['String']['output'];
  /** The user's own merchant. */
  homeMerchantId: Scalars['ID']['output'];
  /** The merchant the request acts for. */
  merchantId: Scalars['ID']['output'];
  /** Platform staff: may act for any merchant with Paygate-Merchant. */
  platform: Scalars['Boolean']['output'];
  /** The user's role (admin, operator, developer or viewer); null for an API key, which has scopes alone. */
  role: Maybe<Scalars['String']['output']>;
  /** The scopes it holds: each operation names the one it needs. */
  scopes: Array<Scalars['String']['output']>;
};

export type WebhookAttempt = Node & {
  __typename?: 'WebhookAttempt';
  at: Scalars['Time']['output'];
  durationMs: Scalars['Int']['output'];
  error: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  status: WebhookStatus;
};

/** Provider events received within the window, and how many of them are in each status now. */
export type WebhookCounts = {
  __typename?: 'WebhookCounts';
  dead: Scalars['Int']['output'];
  failed: Scalars['Int']['output'];
  ignored: Scalars['Int']['output'];
  processed: Scalars['Int']['output'];
  received: Scalars['Int']['output'];
};

export type WebhookDelivery = Node & {
  __typename?: 'WebhookDelivery';
  attemptLog: Array<WebhookDeliveryAttempt>;
  attempts: Scalars['Int']['output'];
  createdAt: Scalars['Time']['output'];
  deliveredAt: Maybe<Scalars['Time']['output']>;
  endpointID: Scalars['ID']['output'];
  eventID: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  lastError: Maybe<Scalars['String']['output']>;
  lastStatusCode: Maybe<Scalars['Int']['output']>;
  latencyMs: Maybe<Scalars['Int']['output']>;
  nextAttemptAt: Maybe<Scalars['Time']['output']>;
  status: WebhookDeliveryStatus;
  type: Scalars['String']['output'];
  updatedAt: Scalars['Time']['output'];
};

export type WebhookDeliveryAttempt = Node & {
  __typename?: 'WebhookDeliveryAttempt';
  at: Scalars['Time']['output'];
  error: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  latencyMs: Scalars['Int']['output'];
  statusCode: Maybe<Scalars['Int']['output']>;
};

/** A connection to a list of items. */
export type WebhookDeliveryConnection = {
  __typename?: 'WebhookDeliveryConnection';
  /** A list of edges. */
  edges: Array<WebhookDeliveryEdge>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
  /** Identifies the total count of items in the connection. */
  totalCount: Scalars['Int']['output'];
};

/** An edge in a connection. */
export type WebhookDeliveryEdge = {
  __typename?: 'WebhookDeliveryEdge';
  /** A cursor for use in pagination. */
  cursor: Scalars['Cursor']['output'];
  /** The item at the end of the edge. */
  node: WebhookDelivery;
};

/** Ordering options for WebhookDelivery connections */
export type WebhookDeliveryOrder = {
  /** The ordering direction. */
  direction?: OrderDirection;
  /** The field by which to order WebhookDeliveries. */
  field: WebhookDeliveryOrderField;
};

/** Properties by which WebhookDelivery connections can be ordered. */
export type WebhookDeliveryOrderField =
  | 'CREATED_AT';

/** Where one event's delivery to one endpoint is. */
export type WebhookDeliveryStatus =
  /** The endpoint answered 2xx. */
  | 'DELIVERED'
  /** Every try of the retry schedule failed, or the endpoint answered 410 Gone; only a retry sends it again. */
  | 'FAILED'
  /** Not delivered yet; tried at nextAttemptAt. */
  | 'PENDING';

export type WebhookEndpoint = Node & {
  __typename?: 'WebhookEndpoint';
  createdAt: Scalars['Time']['output'];
  description: Maybe<Scalars['String']['output']>;
  disabledReason: Maybe<Scalars['String']['output']>;
  events: Array<Scalars['String']['output']>;
  failingSince: Maybe<Scalars['Time']['output']>;
  id: Scalars['ID']['output'];
  status: WebhookEndpointStatus;
  updatedAt: Scalars['Time']['output'];
  url: Scalars['String']['output'];
};

/** A connection to a list of items. */
export type WebhookEndpointConnection = {
  __typename?: 'WebhookEndpointConnection';
  /** A list of edges. */
  edges: Array<WebhookEndpointEdge>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
  /** Identifies the total count of items in the connection. */
  totalCount: Scalars['Int']['output'];
};

/** An edge in a connection. */
export type WebhookEndpointEdge = {
  __typename?: 'WebhookEndpointEdge';
  /** A cursor for use in pagination. */
  cursor: Scalars['Cursor']['output'];
  /** The item at the end of the edge. */
  node: WebhookEndpoint;
};

/** Ordering options for WebhookEndpoint connections */
export type WebhookEndpointOrder = {
  /** The ordering direction. */
  direction?: OrderDirection;
  /** The field by which to order WebhookEndpoints. */
  field: WebhookEndpointOrderField;
};

/** Properties by which WebhookEndpoint connections can be ordered. */
export type WebhookEndpointOrderField =
  | 'CREATED_AT';

/** Whether a webhook endpoint is sent events. */
export type WebhookEndpointStatus =
  /** Nothing is sent to it; its deliveries already queued wait until it is enabled again. */
  | 'DISABLED'
  /** Events of the types it subscribes to are delivered to it. */
  | 'ENABLED';

/**
 * A webhook endpoint with its signing secret (whsec_...), answered when the endpoint is made or its
 * secret rotated: the only times the secret is shown.
 */
export type WebhookEndpointWithSecret = {
  __typename?: 'WebhookEndpointWithSecret';
  endpoint: WebhookEndpoint;
  secret: Scalars['String']['output'];
};

export type WebhookEvent = Node & {
  __typename?: 'WebhookEvent';
  attemptLog: Array<WebhookAttempt>;
  attempts: Scalars['Int']['output'];
  eventID: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  ignoredReason: Maybe<Scalars['String']['output']>;
  lastError: Maybe<Scalars['String']['output']>;
  nextAttemptAt: Maybe<Scalars['Time']['output']>;
  paymentID: Maybe<Scalars['String']['output']>;
  processedAt: Maybe<Scalars['Time']['output']>;
  provider: Scalars['String']['output'];
  receivedAt: Scalars['Time']['output'];
  status: WebhookStatus;
  type: Scalars['String']['output'];
};

/** A connection to a list of items. */
export type WebhookEventConnection = {
  __typename?: 'WebhookEventConnection';
  /** A list of edges. */
  edges: Array<WebhookEventEdge>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
  /** Identifies the total count of items in the connection. */
  totalCount: Scalars['Int']['output'];
};

/** An edge in a connection. */
export type WebhookEventEdge = {
  __typename?: 'WebhookEventEdge';
  /** A cursor for use in pagination. */
  cursor: Scalars['Cursor']['output'];
  /** The item at the end of the edge. */
  node: WebhookEvent;
};

/** Ordering options for WebhookEvent connections */
export type WebhookEventOrder = {
  /** The ordering direction. */
  direction?: OrderDirection;
  /** The field by which to order WebhookEvents. */
  field: WebhookEventOrderField;
};

/** Properties by which WebhookEvent connections can be ordered. */
export type WebhookEventOrderField =
  | 'RECEIVED_AT';

/**
 * WebhookEventWhereInput is used for filtering WebhookEvent objects.
 * Input was generated by ent.
 */
export type WebhookEventWhereInput = {
  and?: InputMaybe<Array<WebhookEventWhereInput>>;
  /** event_id field predicates */
  eventID?: InputMaybe<Scalars['String']['input']>;
  eventIDContains?: InputMaybe<Scalars['String']['input']>;
  eventIDContainsFold?: InputMaybe<Scalars['String']['input']>;
  eventIDEqualFold?: InputMaybe<Scalars['String']['input']>;
  eventIDGT?: InputMaybe<Scalars['String']['input']>;
  eventIDGTE?: InputMaybe<Scalars['String']['input']>;
  eventIDHasPrefix?: InputMaybe<Scalars['String']['input']>;
  eventIDHasSuffix?: InputMaybe<Scalars['String']['input']>;
  eventIDIn?: InputMaybe<Array<Scalars['String']['input']>>;
  eventIDLT?: InputMaybe<Scalars['String']['input']>;
  eventIDLTE?: InputMaybe<Scalars['String']['input']>;
  eventIDNEQ?: InputMaybe<Scalars['String']['input']>;
  eventIDNotIn?: InputMaybe<Array<Scalars['String']['input']>>;
  /** id field predicates */
  id?: InputMaybe<Scalars['ID']['input']>;
  idContainsFold?: InputMaybe<Scalars['ID']['input']>;
  idEqualFold?: InputMaybe<Scalars['ID']['input']>;
  idGT?: InputMaybe<Scalars['ID']['input']>;
  idGTE?: InputMaybe<Scalars['ID']['input']>;
  idIn?: InputMaybe<Array<Scalars['ID']['input']>>;
  idLT?: InputMaybe<Scalars['ID']['input']>;
  idLTE?: InputMaybe<Scalars['ID']['input']>;
  idNEQ?: InputMaybe<Scalars['ID']['input']>;
  idNotIn?: InputMaybe<Array<Scalars['ID']['input']>>;
  not?: InputMaybe<WebhookEventWhereInput>;
  or?: InputMaybe<Array<WebhookEventWhereInput>>;
  /** payment_id field predicates */
  paymentID?: InputMaybe<Scalars['String']['input']>;
  paymentIDContains?: InputMaybe<Scalars['String']['input']>;
  paymentIDContainsFold?: InputMaybe<Scalars['String']['input']>;
  paymentIDEqualFold?: InputMaybe<Scalars['String']['input']>;
  paymentIDGT?: InputMaybe<Scalars['String']['input']>;
  paymentIDGTE?: InputMaybe<Scalars['String']['input']>;
  paymentIDHasPrefix?: InputMaybe<Scalars['String']['input']>;
  paymentIDHasSuffix?: InputMaybe<Scalars['String']['input']>;
  paymentIDIn?: InputMaybe<Array<Scalars['String']['input']>>;
  paymentIDIsNil?: InputMaybe<Scalars['Boolean']['input']>;
  paymentIDLT?: InputMaybe<Scalars['String']['input']>;
  paymentIDLTE?: InputMaybe<Scalars['String']['input']>;
  paymentIDNEQ?: InputMaybe<Scalars['String']['input']>;
  paymentIDNotIn?: InputMaybe<Array<Scalars['String']['input']>>;
  paymentIDNotNil?: InputMaybe<Scalars['Boolean']['input']>;
  /** provider field predicates */
  provider?: InputMaybe<Scalars['String']['input']>;
  providerContains?: InputMaybe<Scalars['String']['input']>;
  providerContainsFold?: InputMaybe<Scalars['String']['input']>;
  providerEqualFold?: InputMaybe<Scalars['String']['input']>;
  providerGT?: InputMaybe<Scalars['String']['input']>;
  providerGTE?: InputMaybe<Scalars['String']['input']>;
  providerHasPrefix?: InputMaybe<Scalars['String']['input']>;
  providerHasSuffix?: InputMaybe<Scalars['String']['input']>;
  providerIn?: InputMaybe<Array<Scalars['String']['input']>>;
  providerLT?: InputMaybe<Scalars['String']['input']>;
  providerLTE?: InputMaybe<Scalars['String']['input']>;
  providerNEQ?: InputMaybe<Scalars['String']['input']>;
  providerNotIn?: InputMaybe<Array<Scalars['String']['input']>>;
  /** received_at field predicates */
  receivedAt?: InputMaybe<Scalars['Time']['input']>;
  receivedAtGT?: InputMaybe<Scalars['Time']['input']>;
  receivedAtGTE?: InputMaybe<Scalars['Time']['input']>;
  receivedAtIn?: InputMaybe<Array<Scalars['Time']['input']>>;
  receivedAtLT?: InputMaybe<Scalars['Time']['input']>;
  receivedAtLTE?: InputMaybe<Scalars['Time']['input']>;
  receivedAtNEQ?: InputMaybe<Scalars['Time']['input']>;
  receivedAtNotIn?: InputMaybe<Array<Scalars['Time']['input']>>;
  /** status field predicates */
  status?: InputMaybe<WebhookStatus>;
  statusIn?: InputMaybe<Array<WebhookStatus>>;
  statusNEQ?: InputMaybe<WebhookStatus>;
  statusNotIn?: InputMaybe<Array<WebhookStatus>>;
  /** type field predicates */
  type?: InputMaybe<Scalars['String']['input']>;
  typeContains?: InputMaybe<Scalars['String']['input']>;
  typeContainsFold?: InputMaybe<Scalars['String']['input']>;
  typeEqualFold?: InputMaybe<Scalars['String']['input']>;
  typeGT?: InputMaybe<Scalars['String']['input']>;
  typeGTE?: InputMaybe<Scalars['String']['input']>;
  typeHasPrefix?: InputMaybe<Scalars['String']['input']>;
  typeHasSuffix?: InputMaybe<Scalars['String']['input']>;
  typeIn?: InputMaybe<Array<Scalars['String']['input']>>;
  typeLT?: InputMaybe<Scalars['String']['input']>;
  typeLTE?: InputMaybe<Scalars['String']['input']>;
  typeNEQ?: InputMaybe<Scalars['String']['input']>;
  typeNotIn?: InputMaybe<Array<Scalars['String']['input']>>;
};

/**
 * A provider's webhook figures. The counts are of the events stored (kept 35 days, those still
 * waiting or failing kept longer); signatureFailures is this server's own since it started.
 */
export type WebhookProviderMetrics = {
  __typename?: 'WebhookProviderMetrics';
  dead: Scalars['Int']['output'];
  failed: Scalars['Int']['output'];
  ignored: Scalars['Int']['output'];
  /** Time from receipt to processing, over the provider's latest 1000 processed events; null before any. */
  p50Ms: Maybe<Scalars['Float']['output']>;
  p99Ms: Maybe<Scalars['Float']['output']>;
  processed: Scalars['Int']['output'];
  provider: Scalars['String']['output'];
  /** Every stored event of the provider, whatever its status. */
  received: Scalars['Int']['output'];
  /** Deliveries this server refused for their signature since it started: each server counts its own. */
  signatureFailures: Scalars['Int']['output'];
};

export type WebhookRetryInput = {
  baseS: Scalars['Int']['input'];
  factor: Scalars['Float']['input'];
  maxAttempts: Scalars['Int']['input'];
};

/** An inbound webhook event that failed is retried after baseS seconds, then factor times longer each time, until maxAttempts, when it is dead. */
export type WebhookRetrySettings = {
  __typename?: 'WebhookRetrySettings';
  baseS: Scalars['Int']['output'];
  factor: Scalars['Float']['output'];
  maxAttempts: Scalars['Int']['output'];
};

/** Where a provider's webhook event is in its processing. */
export type WebhookStatus =
  /** Failed as often as the retry policy allows; only a retry brings it back. */
  | 'DEAD'
  /** Processing failed; it is tried again at nextAttemptAt. */
  | 'FAILED'
  /** Nothing to apply; ignoredReason says why. */
  | 'IGNORED'
  /** Applied to the payment it is about. */
  | 'PROCESSED'
  /** Verified and stored, waiting for the worker. */
  | 'RECEIVED';

/** A provider of a rule and its share of the rule's first attempts. */
export type WeightedProvider = {
  __typename?: 'WeightedProvider';
  provider: Scalars['String']['output'];
  weight: Scalars['Int']['output'];
};

export type WeightedProviderInput = {
  provider: Scalars['String']['input'];
  weight: Scalars['Int']['input'];
};

export type LoginMutationVariables = Exact<{
  input: LoginInput;
}>;


export type LoginMutation = { __typename?: 'Mutation', login: { __typename?: 'AuthPayload', accessToken: string } };

export type CreatePaymentMutationVariables = Exact<{
  input: CreatePaymentInput;
}>;


export type CreatePaymentMutation = { __typename?: 'Mutation', createPayment: { __typename?: 'Payment', id: string, status: PaymentStatus, amount: string, currency: string, provider: string, failureCode: string | null } };

export type PaymentsQueryVariables = Exact<{
  first: Scalars['Int']['input'];
  after?: InputMaybe<Scalars['Cursor']['input']>;
}>;


export type PaymentsQuery = { __typename?: 'Query', payments: { __typename?: 'PaymentConnection', totalCount: number, edges: Array<{ __typename?: 'PaymentEdge', cursor: string, node: { __typename?: 'Payment', id: string, status: PaymentStatus, amount: string, currency: string } }>, pageInfo: { __typename?: 'PageInfo', hasNextPage: boolean, endCursor: string | null } } };

export type RefundPaymentMutationVariables = Exact<{
  input: RefundPaymentInput;
}>;


export type RefundPaymentMutation = { __typename?: 'Mutation', refundPayment: { __typename?: 'Refund', id: string, status: RefundStatus, amount: string, payment: { __typename?: 'Payment', id: string, status: PaymentStatus, amountRefunded: string } } };

export type PaymentUpdatedSubscriptionVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type PaymentUpdatedSubscription = { __typename?: 'Subscription', paymentUpdated: { __typename?: 'Payment', id: string, status: PaymentStatus, amountRefunded: string } };

export type PaymentMetadataQueryVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type PaymentMetadataQuery = { __typename?: 'Query', payment: { __typename?: 'Payment', id: string, metadata: Record<string, string> } | null };


export const LoginDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"Login"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"LoginInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"login"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"accessToken"}}]}}]}}]} as unknown as DocumentNode<LoginMutation, LoginMutationVariables>;
export const CreatePaymentDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreatePayment"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreatePaymentInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createPayment"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"provider"}},{"kind":"Field","name":{"kind":"Name","value":"failureCode"}}]}}]}}]} as unknown as DocumentNode<CreatePaymentMutation, CreatePaymentMutationVariables>;
export const PaymentsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Payments"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Cursor"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"payments"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<PaymentsQuery, PaymentsQueryVariables>;
export const RefundPaymentDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RefundPayment"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RefundPaymentInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"refundPayment"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"payment"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amountRefunded"}}]}}]}}]}}]} as unknown as DocumentNode<RefundPaymentMutation, RefundPaymentMutationVariables>;
export const PaymentUpdatedDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"PaymentUpdated"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"paymentUpdated"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amountRefunded"}}]}}]}}]} as unknown as DocumentNode<PaymentUpdatedSubscription, PaymentUpdatedSubscriptionVariables>;
export const PaymentMetadataDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"PaymentMetadata"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"payment"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"metadata"}}]}}]}}]} as unknown as DocumentNode<PaymentMetadataQuery, PaymentMetadataQueryVariables>;