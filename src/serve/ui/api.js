// The page's only way to the server: GETs of /ui/api/* with the X-Batchai-UI header (a foreign
// page cannot send it without a CORS preflight, which the server never grants), and the poller
// that drives every view: 1 s while something is queued or running, 5 s otherwise, and nothing
// while the tab is hidden.
'use strict';
(function (BA) {
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
    const headers = {'X-Batchai-UI': '1', 'Accept': 'application/json'};
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
      document.addEventListener('visibilitychange', () => {
        if (document.hidden) this.cancel();
        else this.kick();
      });
    }
    setView(view) {
      this.generation++;
      this.view = view;
      this.kick();
    }
    cancel() {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
    }
    // Refresh as soon as the running one (if any) is done.
    kick() {
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
      let busy = false, failed = false;
      const started = performance.now();
      try {
        busy = await view.refresh();
      } catch (e) {
        failed = true;
        if (gen === this.generation) this.onError(e);
      }
      this.running = false;
      BA.lastRefreshMs = performance.now() - started;
      if (this.again || gen !== this.generation) return this.kick();
      if (document.hidden) return;
      // A refresh that failed waits 5 s; a busy view asks again 1 s after its last answer.
      const wait = busy && !failed ? 1000 : 5000;
      BA.pollInterval = wait;
      if (!failed) this.onError(null);
      this.timer = setTimeout(() => this.tick(), wait);
    }
  }

  Object.assign(BA, {get, HttpError, Poller});
})(window.BA);
