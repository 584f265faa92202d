// Experiment page (#/experiment/rg/ws/exp): every job's val_acc per epoch overlaid on one chart
// (one colour per job, a legend) and a table of best and final accuracy.
'use strict';
(function (BA) {
  const {h, setText, route, syncRows, stateBadge, updateBadge, cliBox, fmtNum, Chart} = BA;

  class ExperimentView {
    constructor(rg, ws, exp) {
      this.params = {resourceGroup: rg, workspace: ws, experiment: exp};
      this.cli = cliBox();
      this.valAcc = new Chart('val_acc by job');
      this.acc = new Chart('acc by job');
      this.note = h('span', {class: 'muted small'});
      this.body = h('tbody');
      this.el = h('div', {class: 'view experiment'},
        h('div', {class: 'title-row'}, h('h1', null, exp, ' ', h('span', {class: 'muted'}, 'curves')),
          h('a', {href: route('jobs', rg, ws, exp)}, 'job list')),
        this.cli,
        h('section', {class: 'card'}, h('div', {class: 'charts'}, this.valAcc.el, this.acc.el), this.note),
        h('section', {class: 'card'}, h('div', {class: 'scroll'}, h('table', {class: 'compare'},
          h('thead', null, h('tr', null, ...['', 'Job', 'State', 'Best val_acc', 'Best epoch', 'Final val_acc',
            'Test accuracy'].map((t) => h('th', null, t)))), this.body))));
      BA.crumbs([[`${rg}/${ws}`, null], [exp, route('jobs', rg, ws, exp)],
        ['curves', route('experiment', rg, ws, exp)]]);
    }
    async refresh() {
      const r = await BA.get('experiment', this.params);
      this.cli.set(r.cli);
      const jobs = (r.jobs || []).slice().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const color = (i) => BA.PALETTE[i % BA.PALETTE.length];
      const pts = (j, k) => (j.epochs || []).map((e) => [e.epoch, typeof e[k] === 'number' ? e[k] : NaN]);
      this.valAcc.update(jobs.map((j, i) => ({name: j.name, color: color(i), points: pts(j, 'val_acc')})));
      this.acc.update(jobs.map((j, i) => ({name: j.name, color: color(i), points: pts(j, 'acc')})));
      setText(this.note, r.truncated ? 'Only the newest jobs are shown.' : `${jobs.length} jobs`);
      const {resourceGroup: rg, workspace: ws, experiment: exp} = this.params;
      syncRows(this.body, jobs.map((j, i) => Object.assign({color: color(i)}, j)), (j) => j.name, (j) => h('tr', null,
        h('td', null, h('span', {class: 'dot'})),
        h('td', null, h('a', {href: route('job', rg, ws, exp, j.name)}, j.name)),
        h('td', null, stateBadge(j.state)), h('td', {class: 'num'}), h('td', {class: 'num'}), h('td', {class: 'num'}),
        h('td', {class: 'num'})), (tr, j) => {
        const td = tr.children;
        // The legend colour is an SVG swatch: style attributes are not allowed by the CSP.
        if (!td[0].firstChild || td[0].firstChild.tagName !== 'svg' || td[0]._color !== j.color) {
          td[0]._color = j.color;
          td[0].replaceChildren(BA.s('svg', {viewBox: '0 0 10 10', class: 'swatch-dot'},
            BA.s('circle', {cx: 5, cy: 5, r: 5, fill: j.color})));
        }
        updateBadge(td[2].firstChild, j.state);
        setText(td[3], fmtNum(j.bestValAcc, 4));
        setText(td[4], j.bestEpoch ?? '');
        setText(td[5], fmtNum(j.finalValAcc, 4));
        setText(td[6], fmtNum(j.testAccuracy, 4));
      }, 'No jobs.');
      return jobs.some((j) => ['queued', 'running', 'terminating'].includes(j.state));
    }
  }

  BA.ExperimentView = ExperimentView;
})(window.BA);
