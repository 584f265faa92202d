// The page's entry: hash routing (#/, #/jobs/..., #/job/..., #/experiment/...), breadcrumbs, the
// error banner and the poller that refreshes the current view in place.
'use strict';
(function (BA) {
  const {h, setText} = BA;
  // Counted for the browser tests: the CSP must never have to block anything this page does.
  window.__batchaiCspViolations = 0;
  document.addEventListener('securitypolicyviolation', () => { window.__batchaiCspViolations++; });

  const app = document.getElementById('app');
  const banner = document.getElementById('banner');
  const live = document.getElementById('live');
  let view = null;

  BA.crumbs = (items) => {
    const nav = document.getElementById('crumbs');
    nav.replaceChildren(...items.flatMap(([text, href]) => [h('span', {class: 'sep'}, '›'),
      href ? h('a', {href}, text) : h('span', null, text)]));
  };

  function showError(e) {
    if (!e) {
      banner.hidden = true;
      setText(live, BA.pollInterval === 30 ? 'live · idle, watching for changes' : 'live · every 1 s');
      live.className = 'live ok';
      return;
    }
    let text = e.message || String(e);
    if (e instanceof BA.HttpError && e.status === 401) {
      text = 'Not signed in (or the login expired). Run "batchai serve ui-url" and open the link it prints.';
    } else if (e instanceof BA.HttpError && e.status === 404) {
      text = 'Not found: ' + text;
    } else if (!(e instanceof BA.HttpError)) {
      text = 'The server cannot be reached (' + text + '); trying again every 5 s.';
    }
    banner.replaceChildren(h('span', null, text));
    banner.hidden = false;
    setText(live, 'retrying');
    live.className = 'live bad';
  }
  BA.poller = new BA.Poller(showError);

  function parts() {
    const raw = location.hash.replace(/^#\/?/, '');
    return raw ? raw.split('/').map((p) => { try { return decodeURIComponent(p); } catch (_) { return p; } }) : [];
  }

  function navigate() {
    const [kind, ...p] = parts();
    let next;
    if (kind === 'jobs' && p.length >= 3) next = new BA.JobsView(p[0], p[1], p[2], p[3] === 'all' ? '' : p[3], p[4]);
    else if (kind === 'job' && p.length >= 4) next = new BA.JobView(p[0], p[1], p[2], p[3]);
    else if (kind === 'experiment' && p.length >= 3) next = new BA.ExperimentView(p[0], p[1], p[2]);
    else next = new BA.OverviewView();
    view = next;
    app.replaceChildren(view.el);
    window.scrollTo(0, 0);
    BA.poller.setView(view);
  }

  window.addEventListener('hashchange', navigate);
  document.addEventListener('visibilitychange', () => {
    if (document.hidden) setText(live, 'paused (tab hidden)');
  });
  window.__batchaiPage = {loadedAt: Date.now(), views: () => view && view.constructor.name};
  navigate();
})(window.BA);
