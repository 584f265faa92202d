// Overview (#/): clusters with allocation state and node counts by state (a row expands into a
// heat map of its nodes, each with the job on it) and experiments with their job counts. The
// overview is asked with If-None-Match, so an idle page mostly gets 304s.
'use strict';
(function (BA) {
  const {h, setText, route, link, syncRows, stateBadge, updateBadge, cliBox, STATES} = BA;
  const NODE_STATES = [['idleNodeCount', 'idle'], ['runningNodeCount', 'running'], ['preparingNodeCount', 'preparing'],
    ['unusableNodeCount', 'unusable'], ['leavingNodeCount', 'leaving']];
  const clusterKey = (c) => JSON.stringify([c.resourceGroup, c.workspace, c.name]);

  // One cell per node, coloured by state, labelled with its job (and Slurm job id).
  class HeatMap {
    constructor(cluster) {
      this.params = {resourceGroup: cluster.resourceGroup, workspace: cluster.workspace, cluster: cluster.name};
      this.grid = h('div', {class: 'heat'});
      this.note = h('div', {class: 'muted small'});
      this.cli = cliBox();
      this.el = h('div', {class: 'heat-box'}, this.grid, this.note, this.cli);
    }
    async refresh() {
      const r = await BA.get('cluster/nodes', this.params);
      this.cli.set(r.cli);
      const nodes = r.nodes || [];
      const cells = new Map((this.cells || []).map((c) => [c.key, c]));
      this.cells = nodes.map((n) => {
        const key = String(n.nodeId);
        let c = cells.get(key);
        if (!c) {
          c = {key, name: h('b'), job: h('span', {class: 'job'})};
          c.el = h('div', {class: 'cell'}, c.name, c.job);
        }
        BA.setClass(c.el, 'cell node-' + BA.cssWord(n.state));
        setText(c.name, n.name || n.nodeId);
        const job = n.job ? n.job.name + (n.job.slurmJobId ? ` (slurm ${n.job.slurmJobId})` : '') : n.state;
        setText(c.job, job);
        c.el.setAttribute('title', [n.nodeId, n.name, n.state, n.ipAddress,
          n.job ? `job ${n.job.experiment}/${n.job.name}` : ''].filter(Boolean).join('\n'));
        return c;
      });
      const moved = this.cells.some((c, i) => this.grid.children[i] !== c.el);
      if (moved || this.grid.children.length !== this.cells.length) {
        this.grid.replaceChildren(...this.cells.map((c) => c.el));
      }
      setText(this.note,
        `${nodes.length} nodes${r.truncated ? ' (first ones only)' : ''} · engine ${r.engine} · ${r.allocationState}`);
    }
  }

  class OverviewView {
    constructor() {
      this.probesItself = true;  // see Poller
      this.etag = {value: null};
      this.expanded = new Map();  // cluster key → HeatMap
      this.cli = cliBox();
      this.clusterBody = h('tbody');
      this.expBody = h('tbody');
      this.version = h('span', {class: 'muted small'});
      this.el = h('div', {class: 'view overview'},
        h('div', {class: 'title-row'}, h('h1', null, 'Overview'), this.version), this.cli,
        h('section', {class: 'card'}, h('h2', null, 'Clusters'),
          h('div', {class: 'scroll'}, h('table', {class: 'clusters'},
            h('thead', null, h('tr', null, ...['Cluster', 'Workspace', 'Engine', 'VM size', 'Allocation', 'Nodes',
              ...NODE_STATES.map((s) => s[1])].map((t) => h('th', null, t)))), this.clusterBody))),
        h('section', {class: 'card'}, h('h2', null, 'Experiments'),
          h('div', {class: 'scroll'}, h('table', {class: 'experiments'},
            h('thead', null, h('tr', null, ...['Experiment', 'Workspace', ...STATES, ''].map((t) => h('th', null, t)))),
            this.expBody))));
      BA.crumbs([]);
    }
    // Called every second: the overview is a 304 unless something changed; the open heat maps are
    // asked again when it did, while something is busy, and every 30 s.
    async refresh() {
      const r = await BA.get('overview', null, this.etag);
      if (r) this.render(r);
      const now = performance.now();
      if (r || this.busy || !(now - this.mapsAt < 30000)) {
        this.mapsAt = now;
        await Promise.all([...this.expanded.values()].map((m) => m.refresh()));
      }
      return this.busy;
    }
    render(r) {
      this.cli.set(r.cli);
      setText(this.version, `version ${r.version}${r.truncated ? ' · lists truncated' : ''}`);
      const rows = [];
      for (const c of r.clusters || []) {
        rows.push({kind: 'c', c});
        if (this.expanded.has(clusterKey(c))) rows.push({kind: 'heat', c});
      }
      syncRows(this.clusterBody, rows, (x) => x.kind + clusterKey(x.c), (x) => this.makeClusterRow(x),
        (tr, x) => this.updateClusterRow(tr, x), 'No clusters.');
      syncRows(this.expBody, r.experiments || [], (e) => JSON.stringify([e.resourceGroup, e.workspace, e.name]),
        (e) => this.makeExpRow(e), (tr, e) => this.updateExpRow(tr, e), 'No experiments.');
      const active = (n) => n && (n.queued || n.running || n.terminating);
      this.busy = (r.experiments || []).some((e) => active(e.jobCounts))
        || (r.clusters || []).some((c) => c.allocationState === 'resizing' || (c.nodeStateCounts || {}).preparingNodeCount
          || (c.nodeStateCounts || {}).leavingNodeCount);
    }
    makeClusterRow(x) {
      if (x.kind === 'heat') {
        const map = this.expanded.get(clusterKey(x.c));
        return h('tr', {class: 'heat-row'}, h('td', {colspan: 12}, map.el));
      }
      const toggle = h('button', {type: 'button', class: 'expand', 'aria-expanded': 'false'}, '▸');
      const tr = h('tr', {class: 'cluster'}, h('td', null, toggle, ' ', h('span', {class: 'name'})));
      for (let i = 0; i < 6 + NODE_STATES.length - 1; i++) tr.append(h('td'));
      toggle.addEventListener('click', () => {
        const key = clusterKey(tr._c);
        if (this.expanded.has(key)) this.expanded.delete(key);
        else this.expanded.set(key, new HeatMap(tr._c));
        this.etag.value = null;  // redraw rows now, with or without the map
        BA.poller.kick();
      });
      tr._toggle = toggle;
      return tr;
    }
    updateClusterRow(tr, x) {
      if (x.kind === 'heat') return;
      const c = x.c, counts = c.nodeStateCounts || {}, td = tr.children;
      tr._c = c;
      const open = this.expanded.has(clusterKey(c));
      setText(tr._toggle, open ? '▾' : '▸');
      tr._toggle.setAttribute('aria-expanded', String(open));
      setText(tr.querySelector('.name'), c.name);
      setText(td[1], `${c.resourceGroup}/${c.workspace}`);
      setText(td[2], c.engine);
      setText(td[3], c.vmSize);
      if (!td[4].firstChild) td[4].append(stateBadge(c.allocationState));
      updateBadge(td[4].firstChild, c.allocationState);
      setText(td[5], `${c.currentNodeCount ?? ''} / ${c.targetNodeCount ?? ''}`);
      NODE_STATES.forEach(([k], i) => {
        setText(td[6 + i], counts[k] ?? 0);
        td[6 + i].classList.toggle('zero', !counts[k]);
      });
    }
    makeExpRow(e) {
      const tr = h('tr', null, h('td', null, h('a', {class: 'name'})), h('td'));
      for (let i = 0; i < STATES.length; i++) tr.append(h('td', {class: 'num'}));
      tr.append(h('td', null, h('a', {class: 'curves'}, 'curves')));
      return tr;
    }
    updateExpRow(tr, e) {
      const td = tr.children, a = td[0].firstChild;
      a.setAttribute('href', route('jobs', e.resourceGroup, e.workspace, e.name));
      setText(a, e.name);
      setText(td[1], `${e.resourceGroup}/${e.workspace}`);
      STATES.forEach((s, i) => {
        const n = (e.jobCounts || {})[s] || 0;
        setText(td[2 + i], n);
        BA.setClass(td[2 + i], n ? 'num st-text-' + s : 'num zero');
      });
      td[2 + STATES.length].firstChild.setAttribute('href', route('experiment', e.resourceGroup, e.workspace, e.name));
    }
  }

  BA.OverviewView = OverviewView;
})(window.BA);
