// Job page (#/job/rg/ws/exp/job): state, exit code and errors, state history, environment
// variables (as text), output files and the saved model with download links, the live log, the
// per-epoch curves (metrics.json) and the per-rank step-phase summary. Everything updates in place.
'use strict';
(function (BA) {
  const {h, setText, route, syncRows, stateBadge, updateBadge, cliBox, fmtTime, fmtDuration, fmtNum, fmtBytes,
    safeHref, Chart, LogView} = BA;
  const LIVE = new Set(['queued', 'running', 'terminating']);
  const PHASES = ['data', 'forward_backward', 'allreduce', 'update'];

  function table(cls, columns) {
    const body = h('tbody');
    const el = h('div', {class: 'scroll'}, h('table', {class: cls},
      h('thead', null, h('tr', null, ...columns.map((c) => h('th', null, c)))), body));
    return {el, body};
  }
  // A row of `n` cells whose texts are set by `texts(item)`.
  const textRow = (n) => () => { const tr = h('tr'); for (let i = 0; i < n; i++) tr.append(h('td')); return tr; };
  const setCells = (texts) => (tr, item) => texts(item).forEach((t, i) => setText(tr.children[i], t));
  function downloadRow(cells) {
    return () => {
      const tr = textRow(cells)();
      tr.lastChild.append(h('a', {class: 'download', download: ''}, 'download'));
      return tr;
    };
  }
  function setLink(a, url, text) {
    const href = safeHref(url);
    if (href && a.getAttribute('href') !== href) a.setAttribute('href', href);
    if (!href) a.removeAttribute('href');
    if (text !== undefined) setText(a, text);
  }

  class JobView {
    constructor(rg, ws, exp, job) {
      this.params = {resourceGroup: rg, workspace: ws, experiment: exp, job};
      this.badge = stateBadge('');
      this.clis = {show: cliBox(), files: cliBox(), stream: cliBox()};
      this.facts = h('dl', {class: 'facts'});
      this.factCells = {};
      for (const k of ['Exit code', 'Cluster', 'Nodes', 'Tool', 'Priority', 'Created', 'Started', 'Ended', 'Duration',
        'Execution', 'Slurm job', 'Images/s', 'Command line']) {
        this.factCells[k] = h('dd');
        this.facts.append(h('dt', null, k), this.factCells[k]);
      }
      this.errors = h('section', {class: 'card errors', hidden: true}, h('h2', null, 'Errors'), h('ul'));
      this.history = table('history', ['State', 'Time']);
      this.env = table('env', ['Name', 'Value']);
      this.files = table('files', ['Directory', 'File', 'Size', '']);
      this.model = table('model', ['Model', 'Size', '']);
      this.timeline = table('timeline', ['Rank', 'Steps', ...PHASES.map((p) => p + ' ms')]);
      this.timelineNote = h('p', {class: 'muted small timeline-note', hidden: true});
      this.timelineCard = h('section', {class: 'card', hidden: true},
        h('h2', null, 'Step time by phase (mean per step)'), this.timelineNote, this.timeline.el);
      this.charts = {loss: new Chart('loss'), acc: new Chart('accuracy'), lr: new Chart('learning rate'),
        ips: new Chart('images / s', 'bar')};
      this.metricsNote = h('span', {class: 'muted small'});
      this.curvesCard = h('section', {class: 'card', hidden: true},
        h('div', {class: 'title-row'}, h('h2', null, 'Training curves'), this.metricsNote),
        h('div', {class: 'charts'}, ...Object.values(this.charts).map((c) => c.el)));
      this.log = new LogView(this.params);
      this.el = h('div', {class: 'view job'},
        h('div', {class: 'title-row'}, h('h1', null, job), this.badge),
        h('div', {class: 'clis'}, this.clis.show, this.clis.stream, this.clis.files),
        h('div', {class: 'grid2'},
          h('section', {class: 'card'}, h('h2', null, 'Job'), this.facts),
          h('div', null, this.errors, h('section', {class: 'card'}, h('h2', null, 'State history'), this.history.el))),
        this.curvesCard,
        h('section', {class: 'card'}, h('h2', null, 'Output'), this.log.el),
        this.timelineCard,
        h('div', {class: 'grid2'},
          h('section', {class: 'card'}, h('h2', null, 'Output files'), this.model.el, this.files.el),
          h('section', {class: 'card'}, h('h2', null, 'Environment variables'), this.env.el)));
      BA.crumbs([[`${rg}/${ws}`, null], [exp, route('jobs', rg, ws, exp)], [job, route('job', rg, ws, exp, job)]]);
    }
    async refresh() {
      // The log is asked beside the job (with the files and state of the last answer), not after
      // it, so a new line costs one round trip, not two. Only files the job has are asked for: a
      // missing one would log a console error.
      const logNow = this.fileNames ? this.log.refresh(!this.live, this.fileNames) : null;
      const [r, m] = await Promise.all([BA.get('job', this.params),
        this.metricsDone ? null : BA.get('job/metrics', this.params).catch((e) => {
          if (e instanceof BA.HttpError && e.status === 404) return null;
          throw e;
        }), logNow]);
      const j = r.job || {};
      const live = LIVE.has(j.state);
      this.renderJob(r, j);
      // What a job wrote is the job's: a shape the page does not expect shows as such, and the
      // rest of the page keeps updating.
      if (m) {
        try {
          this.renderMetrics(m);
        } catch (e) {
          setText(this.metricsNote, 'metrics could not be shown (' + (e.message || e) + ')');
        }
      }
      // A finished job's metrics do not change: ask once more after it ended, then stop.
      this.metricsDone = !live && this.sawDone;
      this.sawDone = !live;
      const first = !this.fileNames;
      this.fileNames = (r.files || []).map((f) => f.name);
      // The state may have just ended: one more look at the log then (and on the first answer).
      if (first || live !== this.live) await this.log.refresh(!live, this.fileNames);
      this.live = live;
      return live;
    }
    renderJob(r, j) {
      updateBadge(this.badge, j.state);
      const cli = r.cli || {};
      this.clis.show.set(cli.show);
      this.clis.files.set(cli.files);
      this.clis.stream.set(cli.stream);
      const f = this.factCells;
      setText(f['Exit code'], j.exitCode ?? '');
      setText(f['Cluster'], j.cluster);
      setText(f['Nodes'], (j.nodes || []).map((n) => n.name || n.nodeId).join(', ') || j.nodeCount);
      setText(f['Tool'], j.toolType);
      setText(f['Priority'], j.priority);
      setText(f['Created'], fmtTime(j.creationTime));
      setText(f['Started'], fmtTime(j.startTime));
      setText(f['Ended'], fmtTime(j.endTime));
      setText(f['Duration'], fmtDuration(j.startTime, j.endTime));
      setText(f['Execution'], j.executionState);
      setText(f['Slurm job'], j.slurmJobId || '');
      const trimmed = j.commandLineTrimmed ? ' (trimmed: batchai job show has it whole)' : '';
      setText(f['Command line'], (j.commandLine || '') + trimmed);
      const errs = j.errors || [];
      this.errors.hidden = !errs.length;
      const key = JSON.stringify(errs);
      if (key !== this.errorsKey) {
        this.errorsKey = key;
        this.errors.querySelector('ul').replaceChildren(...errs.map((e) => h('li', null,
          h('b', null, e.code || ''), ' ',
          e.message || '', ...(e.details || []).map((d) => h('div', {class: 'muted small'},
            typeof d === 'object' ? `${d.name ?? ''}: ${d.value ?? ''}` : String(d))))));
      }
      syncRows(this.history.body, j.stateHistory || [], (s) => s.state + '@' + s.time, textRow(2),
        setCells((s) => [s.state, fmtTime(s.time)]), 'No history yet.');
      const env = [...(j.environmentVariables || []),
        ...(j.secretEnvironmentVariables || []).map((s) => ({name: s.name, value: '(secret, not shown)',
          secret: true}))];
      syncRows(this.env.body, env, (v) => (v.secret ? 's:' : 'v:') + v.name, textRow(2),
        setCells((v) => [v.name, v.value]), 'None.');
      const linkCell = (texts) => (tr, x) => {
        setCells(texts)(tr, x);
        setLink(tr.lastChild.firstChild, x.url, 'download');
      };
      syncRows(this.model.body, r.model || [], (x) => x.name, downloadRow(3),
        linkCell((x) => [x.name, fmtBytes(x.bytes)]), 'No saved model (yet).');
      syncRows(this.files.body, r.files || [], (x) => x.directory + '/' + (x.path || '') + '/' + x.name, downloadRow(4),
        linkCell((x) => [x.directory, (x.path && x.path !== '.' ? x.path + '/' : '') + x.name, fmtBytes(x.bytes)]),
        'No files yet.');
    }
    renderMetrics(m) {
      const ep = Array.isArray(m.epochs) ? m.epochs : [];
      const series = (k) => ep.map((e) => [e.epoch, typeof e[k] === 'number' ? e[k] : NaN]);
      this.charts.loss.update([{name: 'loss', points: series('loss')},
        {name: 'val_loss', points: series('val_loss'), dashed: true}]);
      this.charts.acc.update([{name: 'acc', points: series('acc')},
        {name: 'val_acc', points: series('val_acc'), dashed: true}]);
      this.charts.lr.update([{name: 'lr', points: series('lr')}]);
      this.charts.ips.update([{name: 'images/s', points: series('images_per_sec')}]);
      this.curvesCard.hidden = !ep.length;  // a job with no epochs (yet) shows no empty charts
      const last = ep[ep.length - 1];
      setText(this.factCells['Images/s'], last ? fmtNum(last.images_per_sec, 1) : '');
      setText(this.metricsNote, ep.length ? `${ep.length} epochs · from ${m.source || 'metrics'}` : 'no epochs yet');
      const ranks = m.timeline && Array.isArray(m.timeline.ranks) ? m.timeline.ranks : [];
      const note = typeof m.timelineError === 'string' ? m.timelineError : '';
      setText(this.timelineNote, note);
      this.timelineNote.hidden = !note;
      this.timelineCard.hidden = !ranks.length && !note;
      syncRows(this.timeline.body, ranks, (x) => String(x.rank), textRow(2 + PHASES.length),
        setCells((x) => [x.rank, x.steps, ...PHASES.map((p) => fmtNum((x.meanMs || {})[p], 2))]));
    }
  }

  BA.JobView = JobView;
})(window.BA);
