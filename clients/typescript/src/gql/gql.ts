/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  mutation Login($input: LoginInput!) {\n    login(input: $input) { accessToken }\n  }\n": typeof types.LoginDocument,
    "\n  mutation CreatePayment($input: CreatePaymentInput!) {\n    createPayment(input: $input) { id status amount currency provider failureCode }\n  }\n": typeof types.CreatePaymentDocument,
    "\n  query Payments($first: Int!, $after: Cursor) {\n    payments(first: $first, after: $after) {\n      totalCount\n      edges { cursor node { id status amount currency } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": typeof types.PaymentsDocument,
    "\n  mutation RefundPayment($input: RefundPaymentInput!) {\n    refundPayment(input: $input) {\n      id status amount\n      payment { id status amountRefunded }\n    }\n  }\n": typeof types.RefundPaymentDocument,
    "\n  subscription PaymentUpdated($id: ID!) {\n    paymentUpdated(id: $id) { id status amountRefunded }\n  }\n": typeof types.PaymentUpdatedDocument,
    "\n  query PaymentMetadata($id: ID!) {\n    payment(id: $id) { id metadata }\n  }\n": typeof types.PaymentMetadataDocument,
};
const documents: Documents = {
    "\n  mutation Login($input: LoginInput!) {\n    login(input: $input) { accessToken }\n  }\n": types.LoginDocument,
    "\n  mutation CreatePayment($input: CreatePaymentInput!) {\n    createPayment(input: $input) { id status amount currency provider failureCode }\n  }\n": types.CreatePaymentDocument,
    "\n  query Payments($first: Int!, $after: Cursor) {\n    payments(first: $first, after: $after) {\n      totalCount\n      edges { cursor node { id status amount currency } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": types.PaymentsDocument,
    "\n  mutation RefundPayment($input: RefundPaymentInput!) {\n    refundPayment(input: $input) {\n      id status amount\n      payment { id status amountRefunded }\n    }\n  }\n": types.RefundPaymentDocument,
    "\n  subscription PaymentUpdated($id: ID!) {\n    paymentUpdated(id: $id) { id status amountRefunded }\n  }\n": types.PaymentUpdatedDocument,
    "\n  query PaymentMetadata($id: ID!) {\n    payment(id: $id) { id metadata }\n  }\n": types.PaymentMetadataDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Login($input: LoginInput!) {\n    login(input: $input) { accessToken }\n  }\n"): (typeof documents)["\n  mutation Login($input: LoginInput!) {\n    login(input: $input) { accessToken }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreatePayment($input: CreatePaymentInput!) {\n    createPayment(input: $input) { id status amount currency provider failureCode }\n  }\n"): (typeof documents)["\n  mutation CreatePayment($input: CreatePaymentInput!) {\n    createPayment(input: $input) { id status amount currency provider failureCode }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Payments($first: Int!, $after: Cursor) {\n    payments(first: $first, after: $after) {\n      totalCount\n      edges { cursor node { id status amount currency } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"): (typeof documents)["\n  query Payments($first: Int!, $after: Cursor) {\n    payments(first: $first, after: $after) {\n      totalCount\n      edges { cursor node { id status amount currency } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RefundPayment($input: RefundPaymentInput!) {\n    refundPayment(input: $input) {\n      id status amount\n      payment { id status amountRefunded }\n    }\n  }\n"): (typeof documents)["\n  mutation RefundPayment($input: RefundPaymentInput!) {\n    refundPayment(input: $input) {\n      id status amount\n      payment { id status amountRefunded }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription PaymentUpdated($id: ID!) {\n    paymentUpdated(id: $id) { id status amountRefunded }\n  }\n"): (typeof documents)["\n  subscription PaymentUpdated($id: ID!) {\n    paymentUpdated(id: $id) { id status amountRefunded }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PaymentMetadata($id: ID!) {\n    payment(id: $id) { id metadata }\n  }\n"): (typeof documents)["\n  query PaymentMetadata($id: ID!) {\n    payment(id: $id) { id metadata }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;