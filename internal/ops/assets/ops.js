// Paygate's operations page: a dashboard built on the public GraphQL API at /query alone, and so
// an example of one. Queries and mutations go over HTTP (POST /query). Updates come over one
// WebSocket to /query, in the graphql-transport-ws protocol, whose client is the few dozen lines
// of `live` below. Everything the API answers is put into the page with textContent and
// createElement, never innerHTML, so no answer is ever read as markup.
(function () {
  'use strict';

  // The signed-in session: the credential (an access token or an API key), the refresh token of
  // a password sign-in, and what to call the signed-in principal. It is kept in memory only, in
  // this closure: not in localStorage, sessionStorage or a cookie, and never in a URL. Reloading
  // the page or opening it in another tab asks to sign in again; in exchange, nothing is left
  // behind for another tab, a later user of the machine or a script reading storage to find. It
  // leaves the page only as the Authorization header of requests to /query and in the WebSocket's
  // connection_init message.
  let session = null;

  // How many payments a page of the list holds, and at most how many an export reads.
  const PAGE = 50;
  const EXPORT_PAGE = 100;
  const EXPORT_MOST = 10000;
  // How often provider health is read again, besides its subscription.
  const PROVIDERS_EVERY_MS = 15000;
  // The error codes that say the credential itself is refused.
  const AUTH_CODES = new Set(['unauthenticated', 'token_expired', 'token_invalid', 'token_revoked', 'invalid_credentials']);

  const PAYMENT_FIELDS = 'id merchantId status amount currency provider createdAt customer { email } card { last4 }';
  const PROVIDER_FIELDS = 'provider enabled circuit requests successRate approvalRate p50Ms p99Ms lastError lastErrorAt';
  const ALERT_FIELDS = 'id rule subject severity status message openedAt acknowledgedBy acknowledgedByEmail';

  const LOGIN = 'mutation OpsLogin($input: LoginInput!) { login(input: $input) { accessToken refreshToken expiresIn } }';
  const REFRESH = 'mutation OpsRefresh($refreshToken: String!) { refreshToken(refreshToken: $refreshToken) { accessToken refreshToken expiresIn } }';
  const LOGOUT = 'mutation OpsLogout($refreshToken: String) { logout(refreshToken: $refreshToken) { revoked } }';
  // A pasted credential is tried on one field of each scope the page reads: refused outright
  // (unauthenticated, expired...) it is not taken; forbidden some fields, it is.
  const PROBE = 'query OpsProbe { payments(first: 1) { edges { node { id } } } providerStatus { provider } webhookEndpoints(first: 1) { edges { node { id } } } }';
  // The export reads pages without the count, which each page would pay for again.
  // list is payments (one merchant's) or allPayments (every merchant's, platform staff only).
  const EXPORT = (list) => 'query OpsExport($where: PaymentWhereInput, $first: Int, $after: Cursor) { payments: ' + list +
    '(first: $first, after: $after, orderBy: {direction: DESC, field: CREATED_AT}, where: $where) { pageInfo { hasNextPage endCursor } ' +
    'edges { node { ' + PAYMENT_FIELDS + ' } } } }';
  const VIEWER = 'query OpsViewer { viewer { email credential platform scopes merchantId homeMerchantId } }';
  const MERCHANTS = 'query OpsMerchants { merchants(first: 100) { merchants { id name status } } }';
  const PAYMENTS = (list) => 'query OpsPayments($where: PaymentWhereInput, $first: Int, $after: Cursor) { payments: ' + list +
    '(first: $first, after: $after, orderBy: {direction: DESC, field: CREATED_AT}, where: $where) { totalCount pageInfo { hasNextPage endCursor } ' +
    'edges { cursor node { ' + PAYMENT_FIELDS + ' } } } }';
  const listField = () => (session && session.allMerchants ? 'allPayments' : 'payments');
  // merchantOf is whom to act for on a payment of the list: its merchant, when the list is every
  // merchant's; otherwise whom the session acts for.
  function merchantOf(id) {
    if (!session || !session.allMerchants) return null;
    const listed = payments.list.find((p) => p.id === id);
    return (listed && listed.merchantId) || (detailPayment && detailPayment.id === id && detailPayment.merchantId) || null;
  }
  const PAYMENT = 'query OpsPayment($id: ID!) { payment(id: $id) { id merchantId status amount amountRefunded amountCaptured amountCapturable currency provider ' +
    'providerPaymentId failureCode failureMessage createdAt updatedAt customer { email } ' +
    'statusHistory { from to reason actor actorEmail at } refunds { id amount status reason createdAt } ' +
    'routing { rule attempts { provider outcome latencyMs } } } }';
  // The actions on a payment; each answers the payment as it is afterwards (a refund, with it).
  const REFUND = 'mutation OpsRefund($input: RefundPaymentInput!) { refundPayment(input: $input) { id status payment { id status } } }';
  const CAPTURE = 'mutation OpsCapture($input: CapturePaymentInput!) { capturePayment(input: $input) { id status } }';
  const CANCEL = 'mutation OpsCancel($input: CancelPaymentInput!) { cancelPayment(input: $input) { id status } }';
  const PROVIDERS = 'query OpsProviders { providerStatus { ' + PROVIDER_FIELDS + ' } }';
  const OVERVIEW = 'query OpsOverview($period: OverviewPeriod!) { overview(period: $period) { from to stepS ' +
    'steps { start approvalRate volume { currency amount } refunds { currency amount } } declineReasons { reason count } ' +
    'providers { provider steps { errorRate p50Ms p95Ms } } } }';
  const ALERTS = 'query OpsAlerts { alerts(first: 20, where: {statusNEQ: RESOLVED}, orderBy: {direction: DESC, field: OPENED_AT}) ' +
    '{ edges { node { ' + ALERT_FIELDS + ' } } } }';
  const ACKNOWLEDGE = 'mutation OpsAcknowledge($id: ID!) { acknowledgeAlert(id: $id) { ' + ALERT_FIELDS + ' } }';
  const RESOLVE = 'mutation OpsResolve($id: ID!) { resolveAlert(id: $id) { ' + ALERT_FIELDS + ' } }';
  const INBOUND = 'query OpsWebhookEvents { webhookEvents(first: 20, orderBy: {direction: DESC, field: RECEIVED_AT}) ' +
    '{ edges { node { id provider type status attempts receivedAt lastError } } } }';
  const ENDPOINTS = 'query OpsWebhookEndpoints { webhookEndpoints(first: 20) { edges { node { id url status events } } } }';
  const DELIVERIES = 'query OpsWebhookDeliveries($endpointId: ID!) { webhookDeliveries(endpointId: $endpointId, first: 20) ' +
    '{ edges { node { id type status attempts lastStatusCode lastError createdAt } } } }';

  const $ = (id) => document.getElementById(id);

  // h makes an element: attributes from attrs (text sets its textContent), then children, each an
  // element or a string put in as text.
  function h(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === 'text') node.textContent = String(value);
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children || []) node.append(child);
    return node;
  }

  const DASH = '–';
  const orDash = (v) => (v === null || v === undefined || v === '' ? DASH : String(v));
  const lower = (s) => String(s || '').toLowerCase().replace(/_/g, ' ');
  const ms = (v) => (v === null || v === undefined ? DASH : v.toFixed(v < 10 ? 1 : 0) + ' ms');
  const percent = (v) => (v === null || v === undefined ? DASH : (v * 100).toFixed(1) + ' %');

  // time is an RFC 3339 instant as a <time> element, in the reader's local time with its date and
  // zone (2 Dec 2026, 17:45:03 UTC). The instant itself is its title.
  const TIME_FORMAT = { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' };
  function time(iso) {
    if (!iso) return DASH;
    const at = new Date(iso);
    const text = isNaN(at) ? iso : at.toLocaleString(undefined, TIME_FORMAT);
    return h('time', { datetime: iso, title: iso, text: text });
  }

  function badge(status) {
    return h('span', { class: 'badge', 'data-status': status, text: lower(status) });
  }

  function cell(content, attrs) {
    return h('td', attrs, [content === null || content === undefined ? DASH : content]);
  }

  function clear(node) {
    node.replaceChildren();
  }

  function emptyRow(tbody, columns, text) {
    tbody.append(h('tr', { class: 'empty' }, [h('td', { colspan: columns, text: text })]));
  }

  const nodesOf = (connection) => ((connection && connection.edges) || []).map((edge) => edge && edge.node).filter(Boolean);

  // ---- GraphQL over HTTP

  const codeOf = (error) => (error && error.extensions && error.extensions.code) || '';
  const messageOf = (body) => ((body.errors && body.errors[0] && body.errors[0].message) || 'no answer');
  const refusedCredential = (body) => Boolean(body.errors && body.errors.some((e) => AUTH_CODES.has(codeOf(e))));

  // post sends one GraphQL request with credential (if any), and answers {data, errors} whatever
  // happens: an unreachable server or an answer that is not JSON become errors too.
  async function post(query, variables, credential, merchant) {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json, application/json' };
    if (credential) headers.Authorization = 'Bearer ' + credential;
    if (merchant) headers['Paygate-Merchant'] = merchant;
    let response;
    try {
      response = await fetch('/query', {
        method: 'POST', headers: headers, credentials: 'omit', cache: 'no-store',
        body: JSON.stringify({ query: query, variables: variables || {} })
      });
    } catch (e) {
      return { errors: [{ message: 'Paygate could not be reached', extensions: { code: 'unreachable' } }] };
    }
    try {
      return await response.json();
    } catch (e) {
      return { errors: [{ message: 'Paygate answered ' + response.status, extensions: { code: 'http_' + response.status } }] };
    }
  }

  // api sends a request as the signed-in principal. A refused credential is renewed once with the
  // refresh token, when there is one; otherwise the session ends and the page asks to sign in.
  // actingFor names another merchant to act for than the session's, for one request: a payment of
  // another merchant's, in the list of every merchant's.
  async function api(query, variables, actingFor) {
    const current = session;
    if (!current) return { errors: [{ message: 'signed out', extensions: { code: 'signed_out' } }] };
    const sent = current.credential;
    const merchant = actingFor || current.merchant;
    let body = await post(query, variables, sent, merchant);
    if (refusedCredential(body) && session === current) {
      // Renewed meanwhile by another request, the new token is tried at once.
      if (current.credential !== sent || await renew()) {
        body = await post(query, variables, current.credential, merchant);
      }
      if (refusedCredential(body) && session === current) {
        signOut('Your session ended (' + messageOf(body) + '): sign in again.');
      }
    }
    if (session !== current) return { errors: [{ message: 'signed out', extensions: { code: 'signed_out' } }] };
    return body;
  }

  // renew trades the refresh token for a new access token, once at a time, and answers whether
  // it did. The WebSocket authenticated with the old token, whose subscriptions end with it, so
  // it starts again with the new one.
  function renew() {
    const current = session;
    if (!current || !current.refreshToken) return Promise.resolve(false);
    if (!current.renewing) {
      current.renewing = post(REFRESH, { refreshToken: current.refreshToken }, null).then((body) => {
        current.renewing = null;
        const tokens = body.data && body.data.refreshToken;
        if (!tokens || session !== current) return false;
        current.credential = tokens.accessToken;
        current.refreshToken = tokens.refreshToken;
        scheduleRenewal(tokens.expiresIn);
        live.restart();
        return true;
      });
    }
    return current.renewing;
  }

  // scheduleRenewal renews the access token a minute before it expires (or at three quarters of
  // a short lifetime); failing that, the page asks to sign in again.
  function scheduleRenewal(expiresIn) {
    const current = session;
    clearTimeout(current.renewTimer);
    const seconds = expiresIn > 120 ? expiresIn - 60 : Math.max(1, expiresIn * 0.75);
    current.renewTimer = setTimeout(() => {
      renew().then((renewed) => {
        if (!renewed && session === current) signOut('Your session expired: sign in again.');
      });
    }, seconds * 1000);
  }

  // ---- Sections: each shows its list, or why it cannot

  const sections = {
    payments: { note: $('payments-note'), body: $('payments-body'), scope: 'payments:read' },
    detail: { note: $('detail-note'), body: $('detail-body'), scope: 'payments:read' },
    overview: { note: $('overview-note'), body: $('overview-body'), scope: 'monitoring:read' },
    providers: { note: $('providers-note'), body: $('providers-body'), scope: 'monitoring:read' },
    alerts: { note: $('alerts-note'), body: $('alerts-body'), scope: 'monitoring:read' },
    webhooks: { note: $('webhooks-note'), body: $('webhooks-body'), scope: 'webhooks:read' },
    deliveries: { note: $('deliveries-note'), body: $('deliveries-body'), scope: 'webhooks:read' }
  };

  function note(section, text, kind) {
    section.note.textContent = text || '';
    if (kind) section.note.dataset.kind = kind;
    else delete section.note.dataset.kind;
  }

  // scopeNeeded reads the scope a forbidden error names ("this operation needs the X scope").
  function scopeNeeded(error, fallback) {
    const match = /needs the (\S+) scope/.exec((error && error.message) || '');
    return match ? match[1] : fallback;
  }

  // answered says whether body holds field; if not, the section says why: a scope the principal
  // lacks, or the error. An answer clears what an earlier failure said, not what was done.
  function answered(section, body, field) {
    if (body.data && body.data[field] !== undefined && body.data[field] !== null) {
      section.body.hidden = false;
      if (section.note.dataset.kind && section.note.dataset.kind !== 'done') note(section, '');
      return true;
    }
    const errors = body.errors || [];
    if (errors.some((e) => codeOf(e) === 'signed_out')) return false;
    const forbidden = errors.find((e) => codeOf(e) === 'forbidden');
    if (forbidden) {
      section.body.hidden = true;
      note(section, 'Needs scope ' + scopeNeeded(forbidden, section.scope) + '.', 'forbidden');
    } else {
      note(section, 'Could not load: ' + messageOf(body), 'error');
    }
    return false;
  }

  // ---- Payments

  // The list shows one page of the payments the filter matches: page is its number, from 1, and
  // starts holds the cursor each page was read after (null for the first).
  // cursors holds the cursor of each payment read by the query, to page on from.
  const payments = { list: [], rows: new Map(), cursors: new Map(), selected: null, filter: {}, page: 1, starts: [null], next: null, total: 0 };

  const createdMs = (p) => Date.parse(p.createdAt) || 0;
  // newer orders payments newest first; ids of one instant are ordered by id, as the list is.
  const newer = (a, b) => createdMs(a) > createdMs(b) || (createdMs(a) === createdMs(b) && a.id > b.id);

  // matchesFilter says whether a payment from a subscription belongs in the list: only the first
  // page takes new ones, and only what the filter's fields it carries allow.
  function matchesFilter(p) {
    const f = payments.filter;
    const created = createdMs(p);
    return (!f.status || p.status === f.status) && (!f.currency || p.currency === f.currency) &&
      (!f.provider || p.provider === f.provider) && (!f.id || p.id === f.id) &&
      (!f.customerEmail || (p.customer && p.customer.email === f.customerEmail)) &&
      (!f.cardLast4 || (p.card && p.card.last4 === f.cardLast4)) &&
      (!f.createdAtGTE || created >= Date.parse(f.createdAtGTE)) && (!f.createdAtLT || created < Date.parse(f.createdAtLT));
  }

  function fillPaymentRow(tr, p) {
    const amount = p.amount + ' ' + p.currency;
    const email = p.customer ? p.customer.email : null;
    const cells = [badge(p.status), amount, p.provider, orDash(email), time(p.createdAt), orDash(p.merchantId)];
    if (!tr.firstChild) {
      const choose = h('button', { type: 'button', class: 'row-button', 'aria-controls': 'detail', text: p.id });
      tr.append(h('th', { scope: 'row' }, [choose]));
      cells.forEach((content, i) => tr.append(cell(content, i === 1 ? { class: 'num' } : i === 5 ? { class: 'merchant-column' } : null)));
    } else {
      cells.forEach((content, i) => tr.cells[i + 1].replaceChildren(content));
    }
    tr.dataset.status = p.status;
  }

  function paymentRow(p, via) {
    const tr = h('tr', { 'data-id': p.id, 'data-via': via });
    fillPaymentRow(tr, p);
    markSelected(tr);
    payments.rows.set(p.id, tr);
    return tr;
  }

  function markSelected(tr) {
    const selected = tr.dataset.id === payments.selected;
    tr.classList.toggle('selected', selected);
    const button = tr.querySelector('.row-button');
    if (selected) button.setAttribute('aria-current', 'true');
    else button.removeAttribute('aria-current');
  }

  function renderPayments() {
    const tbody = $('payments-rows');
    const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest('#payments-rows tr');
    const focusedID = focused ? focused.dataset.id : null;
    payments.rows.clear();
    clear(tbody);
    payments.list.forEach((p) => tbody.append(paymentRow(p, 'query')));
    if (!payments.list.length) emptyRow(tbody, 7, 'No payments match.');
    if (focusedID && payments.rows.has(focusedID)) payments.rows.get(focusedID).querySelector('.row-button').focus();
  }

  // loads counts the reads of the list, so that only the latest one's answer is shown: a filter,
  // a page or a merchant chosen while an earlier read was on its way wins over it.
  let loads = 0;
  async function loadPayments() {
    const load = ++loads;
    const after = payments.starts[payments.page - 1];
    payments.next = null; // no paging on from a page not read yet
    renderPager();
    $('payments-table').classList.toggle('every-merchant', Boolean(session && session.allMerchants));
    const body = await api(PAYMENTS(listField()), { where: payments.filter, first: PAGE, after: after });
    if (load !== loads || !answered(sections.payments, body, 'payments')) return;
    const page = body.data.payments;
    payments.list = nodesOf(page);
    payments.cursors = new Map(page.edges.map((edge) => [edge.node.id, edge.cursor]));
    payments.next = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    payments.total = page.totalCount;
    payments.list.forEach((p) => addProviderOption(p.provider));
    renderPayments();
    renderPager();
  }

  // toFirstPage makes the next read of the list its first page.
  function toFirstPage() {
    payments.page = 1;
    payments.starts = [null];
    payments.next = null;
  }

  function renderPager() {
    const first = (payments.page - 1) * PAGE;
    $('page-position').textContent = payments.total
      ? 'Page ' + payments.page + ': ' + (first + 1) + '–' + (first + payments.list.length) + ' of ' + payments.total
      : '';
    // aria-disabled rather than disabled, which would drop the keyboard focus the button holds.
    $('page-previous').setAttribute('aria-disabled', String(payments.page === 1));
    $('page-next').setAttribute('aria-disabled', String(!payments.next));
  }

  $('page-next').addEventListener('click', () => {
    if (!payments.next) return;
    payments.starts[payments.page] = payments.next;
    payments.page++;
    loadPayments();
  });
  $('page-previous').addEventListener('click', () => {
    if (payments.page === 1) return;
    payments.page--;
    loadPayments();
  });

  // addProviderOption offers a provider in the filter, once.
  function addProviderOption(name) {
    const select = $('filter-provider');
    if (!name || Array.from(select.options).some((o) => o.value === name)) return;
    select.append(h('option', { value: name, text: name }));
  }

  // upsertPayment merges a payment from a subscription: a row in the list is updated in place
  // (or leaves it, when it no longer matches the filter); a new one goes where it belongs, at the
  // top when it is the newest.
  function upsertPayment(p) {
    const list = payments.list;
    const tbody = $('payments-rows');
    const at = list.findIndex((x) => x.id === p.id);
    if (at >= 0) {
      const row = payments.rows.get(p.id);
      if (!matchesFilter(p)) {
        list.splice(at, 1);
        payments.rows.delete(p.id);
        payments.total--;
        renderPager();
        if (row) row.remove();
        if (!list.length) emptyRow(tbody, 7, 'No payments match.');
      } else {
        list[at] = Object.assign({}, list[at], p);
        if (row) {
          fillPaymentRow(row, list[at]);
          flash(row);
        }
      }
    } else if (payments.page === 1 && matchesFilter(p)) {
      let to = list.findIndex((x) => newer(p, x));
      if (to < 0) {
        if (list.length >= PAGE) return; // older than every payment listed
        to = list.length;
      }
      list.splice(to, 0, p);
      payments.total++;
      renderPager();
      const empty = tbody.querySelector('tr.empty');
      if (empty) empty.remove();
      const row = paymentRow(p, 'live');
      const next = list[to + 1] && payments.rows.get(list[to + 1].id);
      tbody.insertBefore(row, next || null);
      flash(row);
      while (list.length > PAGE) {
        const dropped = list.pop();
        const gone = payments.rows.get(dropped.id);
        payments.rows.delete(dropped.id);
        if (gone) gone.remove();
        // What was dropped opens the next page.
        payments.next = payments.cursors.get(list[list.length - 1].id) || payments.next;
      }
      renderPager();
    }
    if (p.id === payments.selected) detailSoon();
  }

  function flash(row) {
    row.classList.remove('updated');
    void row.offsetWidth; // restarts the animation
    row.classList.add('updated');
  }

  function selectPayment(id) {
    payments.selected = id;
    // Another payment's detail, and its actions, go at once, not when this one's comes.
    detailPayment = null;
    clear($('detail-body'));
    note(sections.detail, 'Loading ' + id + '…');
    payments.rows.forEach(markSelected);
    loadDetail();
  }

  $('payments-rows').addEventListener('click', (event) => {
    const row = event.target.closest('tr[data-id]');
    if (row) selectPayment(row.dataset.id);
  });

  $('payment-filters').addEventListener('submit', (event) => {
    event.preventDefault();
    applyFilter();
  });
  $('filter-status').addEventListener('change', applyFilter);

  $('filter-provider').addEventListener('change', applyFilter);

  // dayStart is the start of a yyyy-mm-dd day in the reader's zone, as RFC 3339.
  function dayStart(day, plusDays) {
    const [y, m, d] = day.split('-').map(Number);
    return new Date(y, m - 1, d + (plusDays || 0)).toISOString();
  }

  function applyFilter() {
    const search = $('filter-search').value.trim();
    const status = $('filter-status').value;
    const provider = $('filter-provider').value;
    const currency = $('filter-currency').value.trim().toUpperCase();
    const from = $('filter-from').value;
    const to = $('filter-to').value;
    const refuse = (text, control) => {
      note(sections.payments, text, 'error');
      control.focus();
    };
    if (currency && !/^[A-Z]{3}$/.test(currency)) return refuse('A currency is three letters, such as USD.', $('filter-currency'));
    const lastFour = /^\d{4}$/.test(search);
    if (search && !search.startsWith('pay_') && !search.includes('@') && !lastFour) {
      return refuse("Search takes a payment's id (pay_...), a customer's email, or a card's last four digits.", $('filter-search'));
    }
    if (from && to && to < from) return refuse('The range ends before it starts.', $('filter-to'));
    $('filter-currency').value = currency;
    const filter = {};
    if (search.startsWith('pay_')) filter.id = search;
    else if (lastFour) filter.cardLast4 = search;
    else if (search) filter.customerEmail = search;
    if (status) filter.status = status;
    if (provider) filter.provider = provider;
    if (currency) filter.currency = currency;
    if (from) filter.createdAtGTE = dayStart(from);
    if (to) filter.createdAtLT = dayStart(to, 1); // the whole of the last day
    payments.filter = filter;
    toFirstPage();
    note(sections.payments, '');
    loadPayments();
  }

  // ---- Export: every payment the filter matches (at most EXPORT_MOST), as CSV

  const CSV_COLUMNS = ['id', 'status', 'amount', 'currency', 'provider', 'customer_email', 'created_at', 'merchant_id'];

  // csvField quotes a field, and keeps a spreadsheet from reading one as a formula.
  function csvField(value) {
    let text = value === null || value === undefined ? '' : String(value);
    if (/^[=+\-@\t\r]/.test(text)) text = "'" + text;
    return /[",\r\n']/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }

  let exporting = false;
  $('export-csv').addEventListener('click', async () => {
    if (exporting) return; // one export at a time
    const section = sections.payments;
    const current = session;
    // The filter and the merchant as they are now: a change meanwhile stops the export rather
    // than mixing two lists in one file.
    const filter = payments.filter;
    const merchant = current.merchant;
    const list = listField();
    const lines = [CSV_COLUMNS.join(',')];
    let after = null;
    exporting = true;
    note(section, 'Exporting…');
    try {
      for (let pages = 0; pages < EXPORT_MOST / EXPORT_PAGE; pages++) {
        const body = await api(EXPORT(list), { where: filter, first: EXPORT_PAGE, after: after });
        if (session !== current || current.merchant !== merchant || listField() !== list || payments.filter !== filter) {
          note(section, 'Export stopped: the list changed while it was read.', 'error');
          return;
        }
        if (!answered(section, body, 'payments')) return;
        const page = body.data.payments;
        nodesOf(page).forEach((p) => lines.push([p.id, p.status, p.amount, p.currency, p.provider,
          p.customer ? p.customer.email : '', p.createdAt, p.merchantId].map(csvField).join(',')));
        const next = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
        after = next !== after ? next : null; // a cursor that does not move ends it
        if (!after) break;
      }
    } finally {
      exporting = false;
    }
    const rows = lines.length - 1;
    const link = h('a', { href: URL.createObjectURL(new Blob([lines.join('\r\n') + '\r\n'], { type: 'text/csv' })),
      download: 'payments-' + new Date().toISOString().slice(0, 10) + '.csv', hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60000);
    note(section, 'Exported ' + rows + (rows === 1 ? ' payment' : ' payments') + (after ? ' (the first ' + rows + ')' : '') + '.');
  });

  // ---- One payment's detail

  let detailTimer = null;
  // The payment the detail shows, which its actions act on.
  let detailPayment = null;
  function detailSoon() {
    clearTimeout(detailTimer);
    detailTimer = setTimeout(loadDetail, 250);
  }

  function table(caption, headings, rows) {
    // A region that may scroll sideways is reached by the keyboard too.
    return h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': caption }, [h('table', null, [
      h('caption', { text: caption }),
      h('thead', null, [h('tr', null, headings.map((text) => h('th', { scope: 'col', text: text })))]),
      h('tbody', null, rows.map((cells) => h('tr', null, cells.map((content) => cell(content)))))
    ])]);
  }

  async function loadDetail() {
    const id = payments.selected;
    if (!id) return;
    const section = sections.detail;
    const body = await api(PAYMENT, { id: id }, merchantOf(id));
    if (payments.selected !== id) return;
    if (!answered(section, body, 'payment')) {
      if (!body.errors || !body.errors.some((e) => codeOf(e) === 'forbidden')) clear(section.body);
      return;
    }
    const p = body.data.payment;
    detailPayment = p;
    if (!section.note.dataset.kind) note(section, ''); // "Loading ..."; what an action did stays said
    const facts = [
      ['Status', badge(p.status)],
      ['Amount', p.amount + ' ' + p.currency],
      ['Refunded', p.amountRefunded + ' ' + p.currency],
      ['Provider', p.provider],
      ["Provider's id", orDash(p.providerPaymentId)],
      ['Customer', orDash(p.customer && p.customer.email)],
      ['Failure', p.failureCode ? p.failureCode + (p.failureMessage ? ': ' + p.failureMessage : '') : DASH],
      ['Created', time(p.createdAt)],
      ['Updated', time(p.updatedAt)]
    ];
    const routing = p.routing || { rule: null, attempts: [] };
    section.body.replaceChildren(
      h('h3', { class: 'detail-id', text: p.id }),
      paymentActions(p),
      h('dl', { class: 'facts' }, facts.flatMap(([term, value]) => [h('dt', { text: term }), h('dd', null, [value])])),
      h('h3', { text: 'Status history' }),
      table('How the status moved, oldest first', ['At', 'Move', 'Why, by whom'],
        (p.statusHistory || []).map((s) => [
          time(s.at),
          h('span', { class: 'move' }, s.from ? [badge(s.from), ' → ', badge(s.to)] : [badge(s.to)]),
          h('span', null, [s.reason, h('br'), h('span', { class: 'quiet', text: 'by ' + (s.actorEmail || s.actor), title: s.actor })])
        ])),
      h('h3', { text: 'Refunds' }),
      (p.refunds || []).length
        ? table('Refunds of this payment', ['Refund', 'Amount', 'Status', 'Reason', 'Created'],
          p.refunds.map((r) => [r.id, r.amount + ' ' + p.currency, badge(r.status), orDash(r.reason), time(r.createdAt)]))
        : h('p', { class: 'quiet', text: 'No refunds.' }),
      h('h3', { text: 'Routing' }),
      h('p', { text: 'Rule: ' + (routing.rule || 'none matched; the fallback order stood') }),
      routing.attempts.length
        ? table('The providers asked to charge it, in order', ['Provider', 'Outcome', 'Latency'],
          routing.attempts.map((a) => [a.provider, a.outcome, a.latencyMs + ' ms']))
        : h('p', { class: 'quiet', text: 'No provider was asked.' })
    );
  }

  // ---- Acting on a payment: refund, capture, cancel
  //
  // Each is offered where the payment's status allows it and the credential holds its scope,
  // asked for in a dialog that says what it will do, and sent with an idempotency key of its own,
  // made when the dialog opens: sending it again (a double press, a retry after a lost answer)
  // cannot move money twice. What the API answers, an error included, is shown as it comes.

  const ACTIONS = {
    refund: {
      label: 'Refund', scope: 'refunds:write', statuses: ['SUCCEEDED', 'PARTIALLY_REFUNDED'], amount: true, reason: false,
      mutation: REFUND, field: 'refundPayment',
      left: (p) => minus(p.amountCaptured, p.amountRefunded),
      question: (p) => 'Give back to ' + orDash(p.customer && p.customer.email) + ' part or all of what ' + p.id + ' took. The provider is asked at once.',
      input: (p, amount) => ({ paymentId: p.id, amount: amount })
    },
    capture: {
      label: 'Capture', scope: 'payments:write', statuses: ['REQUIRES_CAPTURE'], amount: true, reason: false,
      mutation: CAPTURE, field: 'capturePayment',
      left: (p) => p.amountCapturable,
      question: (p) => 'Take part or all of what ' + p.id + ' holds; what is not captured is released.',
      input: (p, amount) => ({ paymentId: p.id, amount: amount })
    },
    cancel: {
      label: 'Cancel', scope: 'payments:write', statuses: ['REQUIRES_CAPTURE'], amount: false, reason: true,
      mutation: CANCEL, field: 'cancelPayment',
      question: (p) => 'Void ' + p.id + ': release all it holds. This cannot be undone.',
      input: (p, amount, reason) => ({ paymentId: p.id, reason: reason })
    }
  };

  // minus subtracts decimal amounts of one currency as integers of their smallest digit.
  function minus(a, b) {
    const decimals = (a.split('.')[1] || '').length;
    const units = (v) => BigInt(v.replace('.', '').replace(/^(-?)0+(?=\d)/, '$1'));
    const diff = (units(a) - units(b)).toString().padStart(decimals + 1, '0');
    return decimals ? diff.slice(0, -decimals) + '.' + diff.slice(-decimals) : diff;
  }

  const mayDo = (scope) => Boolean(session && session.viewer && session.viewer.scopes.includes(scope));

  function paymentActions(p) {
    const offered = Object.entries(ACTIONS).filter(([, a]) => a.statuses.includes(p.status) && mayDo(a.scope));
    if (!offered.length) return h('div', { class: 'actions', hidden: true });
    return h('div', { class: 'actions payment-actions' }, offered.map(([name, a]) =>
      h('button', { type: 'button', 'data-payment-action': name, text: a.label + '…', 'aria-label': a.label + ' ' + p.id })));
  }

  // The dialog's action on its payment, with its key; sent says it went out once, after which
  // what it asks can no longer be changed under that key (reopening makes a new one).
  const dialog = { action: null, payment: null, key: null, sending: false, sent: false, done: false };

  $('detail-body').addEventListener('click', (event) => {
    const button = event.target.closest('button[data-payment-action]');
    if (button && detailPayment && detailPayment.id === payments.selected) openAction(button.dataset.paymentAction, detailPayment);
  });

  function openAction(name, p) {
    const a = ACTIONS[name];
    Object.assign(dialog, { action: name, payment: p, key: crypto.randomUUID(), sending: false, sent: false, done: false });
    $('action-amount').readOnly = false;
    $('action-reason').disabled = false;
    $('action-title').textContent = a.label + ' ' + p.id;
    $('action-question').textContent = a.question(p);
    $('action-amount-field').hidden = !a.amount;
    $('action-reason-field').hidden = !a.reason;
    $('action-amount').value = a.amount ? a.left(p) : '';
    $('action-amount-hint').textContent = a.amount ? 'At most ' + a.left(p) + ' ' + p.currency : '';
    $('action-reason').value = 'REQUESTED_BY_CUSTOMER';
    $('action-error').textContent = '';
    $('action-confirm').textContent = a.label;
    $('action-dialog').showModal();
    (a.amount ? $('action-amount') : $('action-reason')).focus();
  }

  // While it is being sent the dialog stays: its answer decides what the page says.
  $('action-cancel').addEventListener('click', () => {
    if (!dialog.sending) $('action-dialog').close();
  });
  $('action-dialog').addEventListener('cancel', (event) => {
    if (dialog.sending) event.preventDefault();
  });
  $('action-dialog').addEventListener('close', () => {
    const name = dialog.action;
    dialog.action = null;
    if (dialog.done) return; // the detail is drawn again, and takes the focus then
    const back = document.querySelector('#detail-body button[data-payment-action="' + name + '"]') || $('detail-heading');
    back.focus();
  });

  $('action-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!dialog.action || dialog.sending) return;
    const a = ACTIONS[dialog.action];
    const p = dialog.payment;
    const amount = $('action-amount').value.trim();
    if (a.amount && !/^\d+(\.\d+)?$/.test(amount)) {
      $('action-error').textContent = 'An amount is digits, with a point before the decimals: 12.50.';
      $('action-amount').focus();
      return;
    }
    // An amount left as offered is sent as none: all that is left, as the server counts it.
    const input = a.input(p, a.amount && amount === a.left(p) ? null : amount, $('action-reason').value);
    if (input.amount === null) delete input.amount;
    input.idempotencyKey = dialog.key;
    const key = dialog.key;
    dialog.sending = true;
    dialog.sent = true;
    $('action-amount').readOnly = true;
    $('action-reason').disabled = true;
    $('action-error').textContent = 'Sending…';
    const body = await api(a.mutation, { input: input }, merchantOf(p.id));
    dialog.sending = false;
    if (dialog.key !== key) return;
    const done = body.data && body.data[a.field];
    if (!done) {
      const error = (body.errors || [])[0];
      $('action-error').textContent = 'Paygate refused it: ' + messageOf(body) + (codeOf(error) ? ' (' + codeOf(error) + ')' : '') +
        '. Confirm sends it again as it is; to change it, go back and open it again.';
      return;
    }
    dialog.done = true;
    $('action-dialog').close();
    note(sections.detail, a.label + ' of ' + p.id + ': ' + lower(done.status) + '.', 'done');
    await loadDetail();
    $('detail-heading').focus();
  });

  // ---- Provider health

  const providers = new Map();

  function renderProviders() {
    const tbody = $('providers-rows');
    clear(tbody);
    providers.forEach((s) => {
      const lastError = s.lastError ? h('span', null, [s.lastError + ' ', h('span', { class: 'quiet' }, ['(', time(s.lastErrorAt), ')'])]) : DASH;
      tbody.append(h('tr', { 'data-provider': s.provider }, [
        h('th', { scope: 'row', text: s.provider }),
        cell(s.enabled ? 'yes' : 'no'),
        cell(h('span', { class: 'badge', 'data-circuit': s.circuit, text: lower(s.circuit) })),
        cell(String(s.requests), { class: 'num' }),
        cell(percent(s.successRate), { class: 'num' }),
        cell(percent(s.approvalRate), { class: 'num' }),
        cell(ms(s.p50Ms), { class: 'num' }),
        cell(ms(s.p99Ms), { class: 'num' }),
        cell(lastError)
      ]));
    });
    if (!providers.size) emptyRow(tbody, 9, 'No providers.');
  }

  async function loadProviders() {
    const body = await api(PROVIDERS);
    if (!answered(sections.providers, body, 'providerStatus')) return;
    providers.clear();
    body.data.providerStatus.forEach((s) => {
      providers.set(s.provider, s);
      addProviderOption(s.provider);
    });
    renderProviders();
  }

  function upsertProvider(s) {
    providers.set(s.provider, s);
    renderProviders();
  }

  // ---- Overview: the monitoring API's figures over the period, drawn with uPlot
  //
  // Each chart is a figure: its canvas for the eye, and the same figures as a table under it for
  // a screen reader, the keyboard and anyone who wants the exact amounts (the API's decimal
  // strings; the chart draws them as numbers, which is close enough to see).

  const SERIES_COLOURS = ['#1f4fd1', '#b3261e', '#137333', '#8a5a00', '#6a1b9a', '#00796b', '#c2185b', '#455a64'];
  // charts maps each chart's box to its uPlot, drawn at the box's width.
  const overview = { charts: new Map(), loads: 0 };
  const CHART_HEIGHT = 200;
  const chartWidth = (plot) => Math.max(plot.clientWidth, 240);
  // A chart follows its box's width: a wider or narrower window draws it again to fit.
  const resized = new ResizeObserver((entries) => entries.forEach((entry) => {
    const drawn = overview.charts.get(entry.target);
    if (drawn) drawn.setSize({ width: chartWidth(entry.target), height: CHART_HEIGHT });
  }));
  const numberOrNull = (v) => (v === null || v === undefined ? null : Number(v));

  function clearOverview() {
    overview.charts.forEach((drawn, plot) => {
      resized.unobserve(plot);
      drawn.destroy();
    });
    overview.charts.clear();
    clear($('overview-body'));
  }

  // chart adds one figure: series are {label, values, text(v) for the table, dash} over the
  // steps' starts, unit says what the y axis counts. It answers how to draw it, once every figure
  // is in place and so its box has its width.
  function chart(id, title, unit, starts, series) {
    const plot = h('div', { class: 'plot', 'aria-hidden': 'true' });
    const rows = starts.map((start, i) => [time(start)].concat(series.map((s) => s.text(s.values[i]))));
    const figure = h('figure', { class: 'chart', id: id }, [
      h('figcaption', { text: title }),
      plot,
      h('details', null, [h('summary', { text: 'The figures' }), table(title + ', step by step', ['Step'].concat(series.map((s) => s.label)), rows)])
    ]);
    $('overview-body').append(figure);
    if (!series.length) {
      plot.append(h('p', { class: 'quiet', text: 'Nothing in this period.' }));
      return () => {};
    }
    const xs = starts.map((start) => Date.parse(start) / 1000);
    const options = {
      width: 0,
      height: CHART_HEIGHT,
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [{}, { label: unit, size: 60 }],
      series: [{}].concat(series.map((s, i) => ({
        label: s.label,
        stroke: SERIES_COLOURS[i % SERIES_COLOURS.length],
        width: 2,
        dash: s.dash ? [6, 4] : undefined,
        spanGaps: false,
        points: { show: true, size: 4 }
      })))
    };
    return () => {
      if (typeof uPlot !== 'function') {
        plot.append(h('p', { class: 'quiet', text: 'The chart could not be drawn: its library did not load. Its figures are below.' }));
        return;
      }
      options.width = chartWidth(plot);
      overview.charts.set(plot, new uPlot(options, [xs].concat(series.map((s) => s.values.map(numberOrNull))), plot));
      resized.observe(plot);
    };
  }

  function renderOverview(o) {
    clearOverview();
    const starts = o.steps.map((s) => s.start);
    const currencies = (o.steps[0] && o.steps[0].volume.map((v) => v.currency)) || [];
    const refunded = (o.steps[0] && o.steps[0].refunds.map((r) => r.currency)) || [];
    const amount = (currency) => (v) => (v === null || v === undefined ? DASH : v + ' ' + currency);
    const draw = [];
    draw.push(chart('chart-volume', 'Volume captured, by currency', 'amount', starts, currencies.map((currency, c) =>
      ({ label: currency, values: o.steps.map((s) => s.volume[c].amount), text: amount(currency) }))));
    draw.push(chart('chart-approval', 'Approval rate', '%', starts, [{
      label: 'Approved', values: o.steps.map((s) => (s.approvalRate === null ? null : s.approvalRate * 100)),
      text: (v) => (v === null ? DASH : v.toFixed(1) + ' %')
    }]));
    draw.push(chart('chart-refunds', 'Refunds, by currency', 'amount', starts, refunded.map((currency, c) =>
      ({ label: currency, values: o.steps.map((s) => s.refunds[c].amount), text: amount(currency) }))));
    const latency = [];
    const errors = [];
    o.providers.forEach((p) => {
      latency.push({ label: p.provider + ' p50', values: p.steps.map((s) => s.p50Ms), text: ms });
      latency.push({ label: p.provider + ' p95', values: p.steps.map((s) => s.p95Ms), text: ms, dash: true });
      errors.push({ label: p.provider, values: p.steps.map((s) => (s.errorRate === null ? null : s.errorRate * 100)), text: (v) => (v === null ? DASH : v.toFixed(1) + ' %') });
    });
    draw.push(chart('chart-latency', 'Provider latency (p50, p95)', 'ms', starts, latency));
    draw.push(chart('chart-errors', 'Provider error rate', '%', starts, errors));

    const failed = o.declineReasons.reduce((sum, r) => sum + r.count, 0);
    const reasons = h('figure', { class: 'chart declines', id: 'chart-declines' }, [h('figcaption', { text: 'Decline reasons' })]);
    if (!failed) reasons.append(h('p', { class: 'quiet', text: 'No payment failed in this period.' }));
    else {
      reasons.append(table('Why payments failed in the period, most first', ['Reason', 'Payments', 'Share'], o.declineReasons.map((r) => [
        lower(r.reason),
        String(r.count),
        h('span', null, [h('meter', { min: 0, max: failed, value: r.count, 'aria-label': lower(r.reason) + ', share of failed payments' }), ' ' + percent(r.count / failed)])
      ])));
    }
    $('overview-body').append(reasons);
    draw.forEach((drawIt) => drawIt());
    note(sections.overview, 'From ' + new Date(o.from).toLocaleString(undefined, TIME_FORMAT) + ' to ' +
      new Date(o.to).toLocaleString(undefined, TIME_FORMAT) + ', in steps of ' + (o.stepS >= 86400 ? o.stepS / 86400 + ' day' : o.stepS / 3600 + ' h') + '.', 'done');
  }

  // The overview is the platform's: it is read once the credential is known to be platform staff's.
  async function loadOverview() {
    if (!session || !session.viewer || !session.viewer.platform) return;
    const load = ++overview.loads;
    const body = await api(OVERVIEW, { period: $('overview-period').value });
    if (load !== overview.loads) return;
    if (!answered(sections.overview, body, 'overview')) {
      clearOverview();
      return;
    }
    renderOverview(body.data.overview);
  }
  $('overview-period').addEventListener('change', loadOverview);

  // ---- Open alerts

  let alerts = [];
  const pendingAlerts = new Set();
  // An alert only moves forward (open, acknowledged, resolved), but the news of it may come out
  // of order: a subscription's older state after a mutation's newer answer. The furthest status
  // seen of each alert is kept, and older news of it is ignored.
  const ALERT_STAGES = { OPEN: 0, ACKNOWLEDGED: 1, RESOLVED: 2 };
  const alertStages = new Map();

  // newerAlert notes a's status and reports whether it is as far along as any seen before.
  function newerAlert(a) {
    const stage = ALERT_STAGES[a.status] || 0;
    if ((alertStages.has(a.id) ? alertStages.get(a.id) : -1) > stage) return false;
    alertStages.set(a.id, stage);
    return true;
  }

  function renderAlerts(focus) {
    const tbody = $('alerts-rows');
    clear(tbody);
    alerts.forEach((a) => {
      const actions = h('div', { class: 'actions' });
      if (a.status === 'OPEN') {
        actions.append(h('button', { type: 'button', 'data-alert': a.id, 'data-action': 'acknowledge', text: 'Acknowledge', 'aria-label': 'Acknowledge alert ' + a.id }));
      }
      actions.append(h('button', { type: 'button', 'data-alert': a.id, 'data-action': 'resolve', text: 'Resolve', 'aria-label': 'Resolve alert ' + a.id }));
      const status = a.acknowledgedBy ? [badge(a.status), ' by ' + (a.acknowledgedByEmail || a.acknowledgedBy)] : [badge(a.status)];
      tbody.append(h('tr', { 'data-id': a.id, 'data-severity': a.severity }, [
        h('th', { scope: 'row' }, [a.rule, h('br'), h('span', { class: 'quiet', text: a.subject })]),
        cell(badge(a.severity)),
        h('td', null, status),
        cell(a.message),
        cell(time(a.openedAt)),
        cell(actions)
      ]));
    });
    if (!alerts.length) emptyRow(tbody, 6, 'No open alerts.');
    if (focus) {
      const again = tbody.querySelector('button[data-alert="' + CSS.escape(focus.id) + '"][data-action="' + focus.action + '"]') ||
        tbody.querySelector('button[data-alert="' + CSS.escape(focus.id) + '"]');
      (again || $('alerts-heading')).focus();
    }
  }

  async function loadAlerts() {
    const body = await api(ALERTS);
    if (!answered(sections.alerts, body, 'alerts')) return;
    alerts = nodesOf(body.data.alerts).filter(newerAlert);
    renderAlerts(focusedAlertButton());
  }

  function focusedAlertButton() {
    const active = document.activeElement;
    if (active && active.dataset && active.dataset.alert) return { id: active.dataset.alert, action: active.dataset.action };
    return null;
  }

  function upsertAlert(a) {
    if (!newerAlert(a)) return;
    const focus = focusedAlertButton();
    alerts = alerts.filter((x) => x.id !== a.id);
    if (a.status !== 'RESOLVED') {
      alerts.push(a);
      alerts.sort((x, y) => (Date.parse(y.openedAt) || 0) - (Date.parse(x.openedAt) || 0));
    }
    renderAlerts(focus);
  }

  $('alerts-rows').addEventListener('click', async (event) => {
    const button = event.target.closest('button[data-alert]');
    if (!button) return;
    const id = button.dataset.alert;
    const acknowledge = button.dataset.action === 'acknowledge';
    // Not disabled while it runs, which would drop the keyboard focus: a second press waits.
    if (pendingAlerts.has(id)) return;
    pendingAlerts.add(id);
    const body = await api(acknowledge ? ACKNOWLEDGE : RESOLVE, { id: id });
    pendingAlerts.delete(id);
    const field = acknowledge ? 'acknowledgeAlert' : 'resolveAlert';
    const alert = body.data && body.data[field];
    if (alert) {
      note(sections.alerts, (acknowledge ? 'Acknowledged ' : 'Resolved ') + id + '.');
      upsertAlert(alert);
      return;
    }
    const forbidden = (body.errors || []).find((e) => codeOf(e) === 'forbidden');
    if (forbidden) {
      note(sections.alerts, (acknowledge ? 'Acknowledging' : 'Resolving') + ' needs scope ' + scopeNeeded(forbidden, 'webhooks:manage') + '.', 'error');
    } else if (!(body.errors || []).some((e) => codeOf(e) === 'signed_out')) {
      note(sections.alerts, 'Could not ' + (acknowledge ? 'acknowledge ' : 'resolve ') + id + ': ' + messageOf(body), 'error');
    }
  });

  // ---- Webhook logs

  let chosenEndpoint = null;

  // resetDeliveries forgets the chosen endpoint and its deliveries: they are another merchant's,
  // or another user's.
  function resetDeliveries() {
    chosenEndpoint = null;
    clear($('delivery-rows'));
    note(sections.deliveries, 'Choose an endpoint to see its latest deliveries.');
    $('deliveries-body').hidden = true;
    $('deliveries-heading').textContent = 'Deliveries';
  }

  async function loadWebhooks() {
    const [inbound, endpoints] = await Promise.all([api(INBOUND), api(ENDPOINTS)]);
    const section = sections.webhooks;
    if (!answered(section, inbound, 'webhookEvents') || !answered(section, endpoints, 'webhookEndpoints')) return;
    const events = $('inbound-rows');
    clear(events);
    nodesOf(inbound.data.webhookEvents).forEach((e) => events.append(h('tr', { 'data-id': e.id }, [
      h('th', { scope: 'row', text: e.id }), cell(e.provider), cell(e.type), cell(badge(e.status)),
      cell(String(e.attempts), { class: 'num' }), cell(time(e.receivedAt)), cell(orDash(e.lastError), { class: 'wrap' })
    ])));
    if (!events.rows.length) emptyRow(events, 7, 'No webhook events received.');

    const rows = $('endpoint-rows');
    const hadFocus = rows.contains(document.activeElement) ? document.activeElement.closest('tr').dataset.id : null;
    clear(rows);
    nodesOf(endpoints.data.webhookEndpoints).forEach((e) => {
      const choose = h('button', { type: 'button', class: 'row-button', 'aria-controls': 'deliveries-body', text: e.id });
      if (e.id === chosenEndpoint) choose.setAttribute('aria-current', 'true');
      rows.append(h('tr', { 'data-id': e.id, class: e.id === chosenEndpoint ? 'selected' : null }, [
        h('th', { scope: 'row' }, [choose]), cell(e.url, { class: 'wrap' }), cell(badge(e.status)), cell(e.events.join(', '), { class: 'wrap' })
      ]));
    });
    if (!rows.rows.length) emptyRow(rows, 4, 'No webhook endpoints.');
    if (hadFocus) {
      const again = rows.querySelector('tr[data-id="' + CSS.escape(hadFocus) + '"] button');
      if (again) again.focus();
    }
  }

  $('endpoint-rows').addEventListener('click', (event) => {
    const row = event.target.closest('tr[data-id]');
    if (!row) return;
    chosenEndpoint = row.dataset.id;
    Array.from($('endpoint-rows').rows).forEach((r) => {
      const chosen = r.dataset.id === chosenEndpoint;
      r.classList.toggle('selected', chosen);
      const button = r.querySelector('button');
      if (button && chosen) button.setAttribute('aria-current', 'true');
      else if (button) button.removeAttribute('aria-current');
    });
    loadDeliveries();
  });

  async function loadDeliveries() {
    const id = chosenEndpoint;
    if (!id) return;
    const section = sections.deliveries;
    const body = await api(DELIVERIES, { endpointId: id });
    if (chosenEndpoint !== id || !answered(section, body, 'webhookDeliveries')) return;
    $('deliveries-heading').textContent = 'Deliveries to ' + id;
    note(section, '');
    const tbody = $('delivery-rows');
    clear(tbody);
    nodesOf(body.data.webhookDeliveries).forEach((d) => tbody.append(h('tr', { 'data-id': d.id }, [
      h('th', { scope: 'row', text: d.id }), cell(d.type), cell(badge(d.status)), cell(String(d.attempts), { class: 'num' }),
      cell(orDash(d.lastStatusCode), { class: 'num' }), cell(orDash(d.lastError), { class: 'wrap' }), cell(time(d.createdAt))
    ])));
    if (!tbody.rows.length) emptyRow(tbody, 7, 'No deliveries yet.');
  }

  // ---- Everything at once: at sign-in, on Refresh, and whenever the live connection is
  // (re)established, which is how a subscriber catches up with what it missed.

  let refreshing = null;
  let queued = null;
  function refreshAll() {
    if (refreshing) {
      // The reads in flight may have started before what the caller needs to see (a catch-up
      // must read after subscribing): one more round follows them.
      if (!queued) queued = refreshing.then(() => { queued = null; return refreshAll(); });
      return queued;
    }
    // The button stays enabled (disabling it would drop the keyboard focus it may hold).
    const button = $('refresh-all');
    button.textContent = 'Refreshing…';
    $('dashboard').setAttribute('aria-busy', 'true');
    refreshing = Promise.all([loadOverview(), loadPayments(), loadProviders(), loadAlerts(), loadWebhooks(), loadDetail(), loadDeliveries()])
      .finally(() => {
        refreshing = null;
        button.textContent = 'Refresh';
        $('dashboard').removeAttribute('aria-busy');
      });
    return refreshing;
  }
  $('refresh-all').addEventListener('click', refreshAll);

  // ---- Live updates: a graphql-transport-ws client
  //
  // One WebSocket to /query carries every subscription. The client sends connection_init with
  // the credential, waits for connection_ack, then subscribes; it answers ping with pong. When
  // the socket closes it connects again after 1, 2, 4 ... 30 seconds (with jitter), and once
  // subscribed again it reads every list anew, catching up with what it missed meanwhile.

  function setLive(state, text) {
    const status = $('live-state');
    status.dataset.live = state;
    status.textContent = text;
  }

  const subscriptions = [
    {
      // The list's payments: one merchant's, or every merchant's (platform staff).
      get field() { return session && session.allMerchants ? 'allPaymentsUpdated' : 'paymentUpdated'; },
      section: 'payments',
      get query() { return 'subscription OpsPaymentUpdated { ' + this.field + ' { ' + PAYMENT_FIELDS + ' } }'; },
      next: upsertPayment
    },
    {
      field: 'refundUpdated', section: 'detail',
      query: 'subscription OpsRefundUpdated { refundUpdated { id paymentId status } }',
      next: (r) => { if (r.paymentId === payments.selected) detailSoon(); }
    },
    {
      field: 'providerStatusChanged', section: 'providers',
      query: 'subscription OpsProviderStatusChanged { providerStatusChanged { ' + PROVIDER_FIELDS + ' } }', next: upsertProvider
    },
    {
      field: 'alertRaised', section: 'alerts',
      query: 'subscription OpsAlertRaised { alertRaised { ' + ALERT_FIELDS + ' } }', next: upsertAlert
    }
  ];

  const live = {
    socket: null,
    on: false,
    attempt: 0,
    retryTimer: null,
    steadyTimer: null,

    start() {
      this.on = true;
      this.attempt = 0;
      this.connect();
    },

    stop() {
      this.on = false;
      clearTimeout(this.retryTimer);
      clearTimeout(this.steadyTimer);
      const socket = this.socket;
      this.socket = null;
      if (socket) socket.close(1000, 'done');
      setLive('off', session ? 'Live updates off' : 'Not signed in');
    },

    restart() {
      if (!this.on) return;
      this.stop();
      this.start();
    },

    connect() {
      const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/query';
      let socket;
      try {
        socket = new WebSocket(url, 'graphql-transport-ws');
      } catch (e) {
        this.retry();
        return;
      }
      this.socket = socket;
      const byID = new Map();
      setLive('connecting', 'Live updates: connecting…');
      const send = (message) => socket.send(JSON.stringify(message));

      socket.addEventListener('open', () => {
        const payload = { Authorization: 'Bearer ' + session.credential };
        if (session.merchant) payload['Paygate-Merchant'] = session.merchant;
        send({ type: 'connection_init', payload: payload });
      });
      socket.addEventListener('message', (event) => {
        if (socket !== this.socket) return;
        let message;
        try {
          message = JSON.parse(event.data);
        } catch (e) {
          socket.close(4400, 'a message is not JSON');
          return;
        }
        const sub = byID.get(message.id);
        switch (message.type) {
          case 'connection_ack':
            subscriptions.forEach((s, i) => {
              if (s.refused) return;
              const id = String(i + 1);
              byID.set(id, s);
              send({ id: id, type: 'subscribe', payload: { query: s.query, operationName: s.query.split(' ')[1] } });
            });
            if (!byID.size) {
              this.on = false;
              socket.close(1000, 'nothing to follow');
              setLive('none', 'No live updates: this credential may follow none of them');
              return;
            }
            // Connected for 30 s, the next failure starts the backoff over.
            this.steadyTimer = setTimeout(() => { this.attempt = 0; }, 30000);
            setLive('catching-up', 'Live updates: catching up…');
            refreshAll().then(() => {
              if (socket === this.socket && socket.readyState === WebSocket.OPEN) setLive('on', 'Live updates on');
            });
            break;
          case 'next': {
            if (!sub) break;
            const payload = message.payload || {};
            const value = payload.data && payload.data[sub.field];
            if (value) sub.next(value);
            else if (payload.errors) this.failed(sub, message.id, payload.errors, byID, socket);
            break;
          }
          case 'error':
            if (sub) this.failed(sub, message.id, message.payload, byID, socket);
            break;
          case 'complete':
            // The server ended a subscription (its credential ended, say): connect again, which
            // subscribes again and catches up.
            if (sub && byID.delete(message.id)) socket.close(1000, 'subscribing again');
            break;
          case 'ping':
            send({ type: 'pong' });
            break;
        }
      });
      socket.addEventListener('close', (event) => {
        if (socket !== this.socket) return;
        this.socket = null;
        clearTimeout(this.steadyTimer);
        if (!this.on) return;
        // 4401 and 4403 refuse the credential: renew it where a refresh token can.
        if (event.code === 4401 || event.code === 4403) renew();
        this.retry();
      });
    },

    // failed handles a subscription's errors: one the principal lacks the scope for is not asked
    // for again; any other starts the connection over, after the backoff.
    failed(sub, id, errors, byID, socket) {
      byID.delete(id);
      const forbidden = (errors || []).find((e) => codeOf(e) === 'forbidden');
      if (forbidden) {
        sub.refused = true;
        return;
      }
      note(sections[sub.section], 'Live updates stopped: ' + messageOf({ errors: errors }), 'error');
      socket.close(1000, 'subscribing again');
    },

    retry() {
      const delay = Math.min(30000, 1000 * Math.pow(2, this.attempt)) * (0.75 + Math.random() / 2);
      this.attempt++;
      setLive('retrying', 'Live updates unavailable, retrying in ' + Math.max(1, Math.round(delay / 1000)) + ' s. Refresh reads the lists meanwhile.');
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        if (this.on && session) this.connect();
      }, delay);
    }
  };

  // ---- Signing in and out

  let providerTimer = null;

  // whoIs reads who the credential is: what to call it, and whether it may act for other
  // merchants, which then may be chosen (from the list of merchants, where it may read it).
  async function whoIs() {
    const current = session;
    const body = await api(VIEWER);
    const viewer = body.data && body.data.viewer;
    if (!viewer || session !== current) return;
    current.viewer = viewer;
    $('session-who').textContent = 'Signed in as ' + viewer.email + (viewer.credential === 'api_key' ? ' (API key)' : '') +
      (viewer.platform ? ', platform staff' : '');
    $('merchant-form').hidden = !viewer.platform;
    $('overview').hidden = !viewer.platform;
    if (viewer.platform) loadOverview();
    // A detail drawn before the scopes were known is drawn again with the actions they allow.
    if (detailPayment) loadDetail();
    if (!viewer.platform || !viewer.scopes.includes('merchants:manage')) return;
    const list = await api(MERCHANTS);
    const options = $('merchant-options');
    clear(options);
    ((list.data && list.data.merchants && list.data.merchants.merchants) || []).forEach((m) =>
      options.append(h('option', { value: m.id, text: m.name + (m.status === 'active' ? '' : ' (' + m.status + ')') })));
  }

  // actFor makes the page read and act for merchant (platform staff only; empty for their own),
  // once the server has taken it.
  $('merchant-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const current = session;
    const all = $('all-merchants').checked;
    const merchant = all ? '' : $('merchant').value.trim();
    $('merchant-error').textContent = '';
    if (merchant && !/^mer_[0-9a-z]+$/.test(merchant)) {
      $('merchant-error').textContent = "A merchant's id is mer_ and letters and digits.";
      $('merchant').focus();
      return;
    }
    const body = await post(VIEWER, null, current.credential, merchant);
    if (session !== current) return;
    if (!(body.data && body.data.viewer)) {
      $('merchant-error').textContent = 'Not taken: ' + messageOf(body);
      $('merchant').focus();
      return;
    }
    current.merchant = merchant || null;
    current.allMerchants = all;
    subscriptions.forEach((s) => { s.refused = false; }); // what follows is asked anew
    payments.selected = null;
    toFirstPage();
    detailPayment = null;
    resetDeliveries();
    clear($('detail-body'));
    note(sections.detail, 'Choose a payment in the list to see its detail.');
    $('merchant-error').textContent = all ? "Listing every merchant's payments; acting for your own merchant otherwise."
      : merchant ? 'Acting for ' + merchant + '.' : 'Acting for your own merchant.';
    live.restart();
    refreshAll();
  });

  // Every merchant's payments are listed instead of one merchant's: no merchant is named then.
  $('all-merchants').addEventListener('change', () => {
    const all = $('all-merchants').checked;
    $('merchant').disabled = all;
    if (all) $('merchant').value = '';
  });

  function startSession(newSession, expiresIn) {
    session = newSession;
    session.merchant = null;
    session.allMerchants = false;
    $('all-merchants').checked = false;
    $('merchant').disabled = false;
    subscriptions.forEach((s) => { s.refused = false; });
    if (expiresIn) scheduleRenewal(expiresIn);
    $('sign-in-error').textContent = '';
    $('sign-in').hidden = true;
    $('dashboard').hidden = false;
    $('session').hidden = false;
    $('session-who').textContent = 'Signed in with ' + session.label;
    $('merchant').value = '';
    $('merchant-error').textContent = '';
    $('payments-heading').focus();
    whoIs();
    refreshAll();
    live.start();
    providerTimer = setInterval(loadProviders, PROVIDERS_EVERY_MS);
  }

  function signOut(reason) {
    const ended = session;
    if (!ended) return;
    session = null;
    clearTimeout(ended.renewTimer);
    clearInterval(providerTimer);
    clearTimeout(detailTimer);
    live.stop();
    // A password session is ended on the server too, so its refresh token is of no further use.
    if (ended.refreshToken && !reason) post(LOGOUT, { refreshToken: ended.refreshToken }, ended.credential);
    payments.list = [];
    payments.rows.clear();
    payments.selected = null;
    providers.clear();
    clearOverview();
    $('overview').hidden = true;
    $('overview-period').value = 'DAY';
    alerts = [];
    alertStages.clear();
    ['payments-rows', 'providers-rows', 'alerts-rows', 'inbound-rows', 'endpoint-rows', 'detail-body'].forEach((id) => clear($(id)));
    Object.values(sections).forEach((s) => note(s, ''));
    note(sections.detail, 'Choose a payment in the list to see its detail.');
    resetDeliveries();
    $('merchant-form').hidden = true;
    clear($('merchant-options'));
    toFirstPage();
    payments.total = 0;
    payments.filter = {};
    detailPayment = null;
    // Nothing the last user typed or chose stays for the next.
    ['filter-search', 'filter-currency', 'filter-from', 'filter-to', 'filter-status', 'filter-provider'].forEach((id) => { $(id).value = ''; });
    if ($('action-dialog').open) {
      dialog.done = true;
      $('action-dialog').close();
    }
    $('page-position').textContent = '';
    $('dashboard').hidden = true;
    $('session').hidden = true;
    $('sign-in').hidden = false;
    $('sign-in-error').textContent = reason || '';
    $('email').focus();
  }

  $('sign-out').addEventListener('click', () => signOut(''));

  function busy(form, on) {
    Array.from(form.elements).forEach((control) => { control.disabled = on; });
  }

  $('login-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const email = $('email').value.trim();
    const password = $('password').value;
    $('sign-in-error').textContent = '';
    if (!email || !password) {
      $('sign-in-error').textContent = 'Enter your email and your password.';
      (email ? $('password') : $('email')).focus();
      return;
    }
    busy(form, true);
    const body = await post(LOGIN, { input: { email: email, password: password } }, null);
    busy(form, false);
    const tokens = body.data && body.data.login;
    if (!tokens) {
      $('sign-in-error').textContent = 'Signing in failed: ' + messageOf(body);
      $('password').value = '';
      $('password').focus();
      return;
    }
    $('password').value = '';
    startSession({ credential: tokens.accessToken, refreshToken: tokens.refreshToken, label: email }, tokens.expiresIn);
  });

  $('key-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const credential = $('credential').value.trim();
    $('sign-in-error').textContent = '';
    if (!credential) {
      $('sign-in-error').textContent = 'Paste an API key or an access token.';
      $('credential').focus();
      return;
    }
    const kind = credential.startsWith('pk_') ? 'an API key' : 'an access token';
    busy(form, true);
    const body = await post(PROBE, null, credential);
    busy(form, false);
    if (refusedCredential(body) || (!body.data && body.errors)) {
      $('sign-in-error').textContent = 'This credential was not accepted: ' + messageOf(body);
      $('credential').focus();
      return;
    }
    $('credential').value = '';
    // A pasted access token cannot be renewed: when it expires, the page asks to sign in again.
    startSession({ credential: credential, refreshToken: null, label: kind }, 0);
  });
})();
