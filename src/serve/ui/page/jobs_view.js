// Queue / job list of one experiment (#/jobs/rg/ws/exp[/state[/page]]): counts by state as filter
// buttons, 100 jobs a page newest first, each queued job's position and the reason it waits. The
// filter and page live in the address, so they survive refreshes and reloads.
'use strict';
(function (BA) {
  const {h, setText, route, syncRows, stateBadge, updateBadge, cliBox, fmtTime, fmtDuration, STATES} = BA;
  const COLUMNS = ['Job', 'State', 'Cluster', 'Nodes', 'Tool', 'Created', 'Started', 'Duration', 'Exit', 'Queue #',
    'Waits for'];

  class JobsView {
    constructor(rg, ws, exp, state, page) {
      this.params = {resourceGroup: rg, workspace: ws, experiment: exp};
      this.state = STATES.includes(state) ? state : '';
      this.page = Math.max(0, parseInt(page, 10) || 0);
      this.cli = cliBox();
      this.filters = h('div', {class: 'filters', role: 'group', 'aria-label': 'state filter'});
      this.filterButtons = ['', ...STATES].map((s) => {
        const count = h('span', {class: 'count'});
        const b = h('button', {type: 'button', class: 'filter', 'data-state': s || 'all'}, s || 'all', ' ', count);
        b._count = count;
        b.addEventListener('click', () => { this.state = s; this.page = 0; this.go(); });
        this.filters.append(b);
        return b;
      });
      this.prev = h('button', {type: 'button'}, '‹ Newer');
      this.next = h('button', {type: 'button'}, 'Older ›');
      this.prev.addEventListener('click', () => { this.page = Math.max(0, this.page - 1); this.go(); });
      this.next.addEventListener('click', () => { this.page++; this.go(); });
      this.pageInfo = h('span', {class: 'pager-info'});
      this.body = h('tbody');
      this.el = h('div', {class: 'view jobs'},
        h('div', {class: 'title-row'}, h('h1', null, exp, ' ', h('span', {class: 'muted'}, 'jobs')),
          h('a', {href: route('experiment', rg, ws, exp)}, 'compare curves')),
        this.cli,
        h('section', {class: 'card'}, this.filters,
          h('div', {class: 'pager'}, this.prev, this.pageInfo, this.next),
          h('div', {class: 'scroll'}, h('table', {class: 'jobs-table'},
            h('thead', null, h('tr', null, ...COLUMNS.map((c) => h('th', null, c)))), this.body))));
      BA.crumbs([[`${rg}/${ws}`, null], [exp, route('jobs', rg, ws, exp)]]);
    }
    // A new filter or page: keep it in the address without a navigation, and ask at once.
    go() {
      const hash = route('jobs', this.params.resourceGroup, this.params.workspace, this.params.experiment,
        this.state || 'all', this.page);
      history.replaceState(null, '', hash);
      BA.poller.kick();
    }
    async refresh() {
      const r = await BA.get('jobs', Object.assign({state: this.state, page: this.page, limit: 100}, this.params));
      this.cli.set(r.cli);
      const counts = r.countsByState || {};
      const all = STATES.reduce((n, s) => n + (counts[s] || 0), 0);
      for (const b of this.filterButtons) {
        const s = b.dataset.state;
        setText(b._count, s === 'all' ? all : counts[s] || 0);
        b.classList.toggle('active', (this.state || 'all') === s);
        b.setAttribute('aria-pressed', String((this.state || 'all') === s));
      }
      const pages = Math.max(1, Math.ceil((r.total || 0) / (r.limit || 100)));
      if (this.page >= pages && this.page > 0) { this.page = pages - 1; this.go(); }
      setText(this.pageInfo, `page ${this.page + 1} of ${pages} · ${Number(r.total || 0).toLocaleString()} jobs`);
      this.prev.disabled = this.page === 0;
      this.next.disabled = this.page + 1 >= pages;
      const {resourceGroup: rg, workspace: ws, experiment: exp} = this.params;
      syncRows(this.body, r.jobs || [], (j) => j.name, (j) => {
        const tr = h('tr', null, h('td', null, h('a', {href: route('job', rg, ws, exp, j.name)}, j.name)),
          h('td', null, stateBadge(j.state)));
        for (let i = 2; i < COLUMNS.length; i++) tr.append(h('td'));
        return tr;
      }, (tr, j) => {
        const td = tr.children;
        updateBadge(td[1].firstChild, j.state);
        setText(td[2], j.cluster);
        setText(td[3], j.nodeCount);
        setText(td[4], j.toolType);
        setText(td[5], fmtTime(j.creationTime));
        setText(td[6], fmtTime(j.startTime));
        setText(td[7], fmtDuration(j.startTime, j.endTime));
        setText(td[8], j.exitCode ?? '');
        setText(td[9], j.queuePosition ?? '');
        setText(td[10], j.waitReason || '');
      }, this.state ? `No ${this.state} jobs.` : 'No jobs.');
      return (counts.queued || 0) + (counts.running || 0) + (counts.terminating || 0) > 0;
    }
  }

  BA.JobsView = JobsView;
})(window.BA);
