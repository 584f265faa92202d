// The page's only way to the server: GETs of /ui/api/* with the X-Batchai-UI header carrying the
// login's session key (kept in this origin's localStorage: the cookie reaches every port of the
// host, the key no other origin can read; a foreign page cannot send the header without a CORS
// preflight, which the server never grants), and the poller
// that drives every view: a full refresh every 1 s while something is queued or running, and
// nothing while the tab is hidden. Otherwise it asks once a second whether anything changed at
// all: the overview with If-None-Match, a 304 of a few hundred bytes. Its version changes with
// every job, cluster and node state, so a job made from the CLI while the page idles still shows
// within 2 s, and an idle job list of 10,000 costs ~1 KB/s instead of 100 rows every few seconds.
// A full refresh every 30 s is the safety net for anything the version might not cover.
'use strict';
(function (BA) {
  const KEY_ITEM = 'batchai-ui-key';
  // The login's redirect to /ui/#key=... : the key goes to storage and out of the address (and
  // history) before anything else reads the address.
  const fresh = /^#key=([A-Za-z0-9_-]{16,128})$/.exec(location.hash);
  if (fresh) {
    try { localStorage.setItem(KEY_ITEM, fresh[1]); } catch (_) { /* storage off: the server says 401 */ }
    history.replaceState(null, '', location.pathname + '#/');
  }

  class HttpError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  // GET path?params → parsed JSON, or null on 304 when `etag` was given (etag.value is updated).
  async function get(path, params, etag) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') q.set(k, v);
    let key = '';
    try { key = localStorage.getItem(KEY_ITEM) || ''; } catch (_) { /* storage off: the server says 401 */ }
    const headers = {'X-Batchai-UI': key || 'none', 'Accept': 'application/json'};
    if (etag && etag.value) headers['If-None-Match'] = etag.value;
    const url = '/ui/api/' + path + (q.toString() ? '?' + q : '');
    BA.requests = (BA.requests || 0) + 1;  // read by the browser test (a hidden tab asks nothing)
    const r = await fetch(url, {credentials: 'same-origin', headers, cache: 'no-store', redirect: 'error'});
    if (r.status === 304 && etag) return null;
    if (!r.ok) {
      let msg = r.statusText;
      try {
        const body = await r.json();
        msg = (body.error && (body.error.message || body.error.code)) || body.message || msg;
      } catch (_) { /* not JSON */ }
      throw new HttpError(r.status, `${r.status} ${msg}`);
    }
    if (etag) etag.value = r.headers.get('ETag');
    return r.json();
  }

  // Runs view.refresh() now and then again after 1 s (view busy) or 5 s; stops while hidden.
  class Poller {
    constructor(onError) {
      this.view = null;
      this.timer = null;
      this.running = false;
      this.generation = 0;
      this.onError = onError;
      this.probeTag = {value: null};
      this.lastFull = -Infinity;
      document.addEventListener('visibilitychange', () => {
        if (document.hidden) this.cancel();
        else this.kick();
      });
    }
    setView(view) {
      this.generation++;
      this.view = view;
      this.busy = false;
      this.lastFull = -Infinity;
      this.kick();
    }
    cancel() {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
    }
    // Refresh the view fully as soon as the running refresh (if any) is done.
    kick() {
      this.lastFull = -Infinity;
      this.cancel();
      if (this.running) {
        this.again = true;
        return;
      }
      this.tick();
    }
    async tick() {
      if (document.hidden || !this.view) return;
      const gen = this.generation, view = this.view;
      this.running = true;
      this.again = false;
      let failed = false;
      const started = performance.now();
      try {
        // A view that asks the overview itself (with its own ETag) needs no probe.
        const due = this.busy || performance.now() - this.lastFull >= 30000 - 50;
        const changed = !due && !view.probesItself && (await get('overview', null, this.probeTag)) !== null;
        if (due || changed || view.probesItself) {
          this.busy = await view.refresh();
          this.lastFull = performance.now();
        }
      } catch (e) {
        failed = true;
        if (gen === this.generation) this.onError(e);
      }
      this.running = false;
      BA.lastRefreshMs = performance.now() - started;
      if (this.again || gen !== this.generation) return this.kick();
      if (document.hidden) return;
      // A refresh that failed waits 5 s; otherwise the next look is 1 s after this answer.
      const wait = failed ? 5000 : 1000;
      BA.pollInterval = this.busy ? 1 : 30;
      if (!failed) this.onError(null);
      this.timer = setTimeout(() => this.tick(), wait);
    }
  }

  Object.assign(BA, {get, HttpError, Poller});
})(window.BA);
