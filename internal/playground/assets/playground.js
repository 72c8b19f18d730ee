// Paygate's GraphiQL page: every request goes to /query with the credential pasted above the
// editor as a bearer token. The credential is kept for this tab only (sessionStorage), so it
// leaves with the tab and is never written where other tabs or later visits would find it.
(function () {
  'use strict';
  var storageKey = 'paygate.playground.credential';
  var input = document.getElementById('token');
  var state = document.getElementById('credential-state');

  function credential() {
    return input.value.trim();
  }
  function showState() {
    state.textContent = credential() ? 'sent as Authorization: Bearer' : 'no credential: only public fields answer';
  }
  input.value = sessionStorage.getItem(storageKey) || '';
  input.addEventListener('input', function () {
    sessionStorage.setItem(storageKey, credential());
    showState();
  });
  document.getElementById('forget').addEventListener('click', function () {
    input.value = '';
    sessionStorage.removeItem(storageKey);
    showState();
  });
  document.getElementById('credential').addEventListener('submit', function (event) {
    event.preventDefault();
  });
  showState();

  function fetcher(params) {
    var headers = {
      'Content-Type': 'application/json',
      Accept: 'application/graphql-response+json, application/json'
    };
    if (credential()) {
      headers.Authorization = 'Bearer ' + credential();
    }
    return fetch('/query', { method: 'POST', headers: headers, body: JSON.stringify(params) })
      .then(function (response) { return response.json(); });
  }

  ReactDOM.createRoot(document.getElementById('graphiql')).render(
    React.createElement(GraphiQL, { fetcher: fetcher, defaultQuery: '{\n  payments(first: 5) {\n    edges { node { id amount currency status createdAt } }\n  }\n}\n' })
  );
})();
