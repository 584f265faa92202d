// Per-epoch charts drawn as SVG with createElementNS: lines with a dot per point (hover shows a
// <title>), or bars. A chart redraws only when its data changed; its box has a fixed aspect ratio,
// so a redraw never moves the page. The numbers are the job's: any finite ones draw in bounded
// time (ticks counted by index, never by adding a step that may not move 1e17), and a missing or
// non-finite value is a gap in its line.
'use strict';
(function (BA) {
  const {h, s} = BA;
  const W = 380, H = 210, L = 52, R = 10, T = 12, B = 34;
  const PALETTE = ['#1f6fd1', '#e8710a', '#12a150', '#d93025', '#8e44ad', '#00838f', '#c2185b', '#6d4c41',
    '#5f6368', '#9e9d24'];

  // A value printed with as many digits as the tick step needs.
  function tickFmt(v, step) {
    if (Math.abs(v) < step * 1e-6) return '0';
    if (Math.abs(v) >= 1e5 || Math.abs(v) < 1e-3) {
      return v.toExponential(Math.min(6, Math.max(1, Math.ceil(Math.log10(Math.abs(v) / step)))));
    }
    return v.toFixed(Math.max(0, Math.min(6, -Math.floor(Math.log10(step)))));
  }
  const MAX_TICKS = 12;
  // The y range widened to a multiple of a 1/2/5 step, with that step (about 4 ticks).
  function niceRange(lo, hi) {
    if (!(lo <= hi)) lo = 0, hi = 1;
    if (hi - lo < 1e-12) lo -= Math.abs(lo) * 0.1 || 0.5, hi += Math.abs(hi) * 0.1 || 0.5;
    const raw = hi / 4 - lo / 4, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((st) => st >= raw);
    const y0 = Math.floor(lo / step) * step, y1 = Math.ceil(hi / step) * step;
    // Past what a double or a 1/2/5 step can hold (±1e308, 1e-320): the plain range.
    if (!isFinite(step) || !(step > 0) || !isFinite(y0) || !isFinite(y1)) return [lo, hi, (hi / 4 - lo / 4) || 1];
    return [y0, y1, step];
  }
  // Where v lies from a to b (0..1), also when b - a passes the largest double.
  function frac(v, a, b) {
    return isFinite(b - a) ? (v - a) / (b - a) : (v / 2 - a / 2) / (b / 2 - a / 2);
  }
  // At most MAX_TICKS values from a to b, `step` apart, each computed from its index.
  function ticks(a, b, step) {
    const n = Math.min(MAX_TICKS - 1, Math.floor(b / step - a / step + 1e-9));
    const out = [];
    for (let i = 0; i <= (isFinite(n) && n >= 0 ? n : 0); i++) if (isFinite(a + i * step)) out.push(a + i * step);
    return out;
  }
  // A line's points split where a value is missing or not finite (a gap, not a jump over it).
  function runs(points) {
    const out = [[]];
    for (const p of points) {
      if (isFinite(p[0]) && isFinite(p[1])) out[out.length - 1].push(p);
      else if (out[out.length - 1].length) out.push([]);
    }
    return out.filter((r) => r.length);
  }

  // series: [{name, color, dashed, points: [[x, y], ...]}]; kind 'line' | 'bar'.
  class Chart {
    constructor(title, kind) {
      this.kind = kind || 'line';
      this.svg = s('svg', {viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': title});
      this.legend = h('div', {class: 'legend'});
      this.el = h('figure', {class: 'chart-box'}, h('figcaption', null, title), this.svg, this.legend);
      this.key = null;
    }
    update(series) {
      const key = JSON.stringify(series);
      if (key === this.key) return;
      this.key = key;
      this.draw(series);
    }
    draw(series) {
      const svg = this.svg;
      svg.replaceChildren();
      const pts = series.flatMap((se) => se.points.filter((p) => isFinite(p[0]) && isFinite(p[1])));
      const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
      let [x0, x1] = xs.length ? [Math.min(...xs), Math.max(...xs)] : [1, 2];
      if (this.kind === 'bar') x0 -= 0.5, x1 += 0.5;
      // One epoch (or epochs so large that ±1 does not move them): a range around it.
      if (!(x1 > x0)) {
        const d = Math.max(1, Math.abs(x0) * 1e-12);
        x0 -= d, x1 += d;
      }
      let [y0, y1, yStep] = niceRange(this.kind === 'bar' ? 0 : ys.length ? Math.min(...ys) : 0,
        ys.length ? Math.max(...ys) : 1);
      const px = (x) => L + frac(x, x0, x1) * (W - L - R);
      const py = (y) => T + (1 - frac(y, y0, y1)) * (H - T - B);
      svg.append(s('rect', {x: L, y: T, width: W - L - R, height: H - T - B, class: 'plot'}));
      for (const v of ticks(y0, y1, yStep)) {
        const y = py(v);
        svg.append(s('line', {x1: L, x2: W - R, y1: y, y2: y, class: 'grid'}));
        svg.append(s('text', {x: L - 4, y: y + 4, class: 'tick', 'text-anchor': 'end'}, tickFmt(v, yStep)));
      }
      const first = Math.ceil(x0), last = Math.floor(x1), step = Math.max(1, Math.ceil((last - first + 1) / 8));
      for (const x of ticks(first, last, step)) {
        svg.append(s('text', {x: px(x), y: H - B + 14, class: 'tick', 'text-anchor': 'middle'}, String(x)));
      }
      svg.append(s('text', {x: L + (W - L - R) / 2, y: H - 4, class: 'axis', 'text-anchor': 'middle'}, 'epoch'));
      if (!pts.length) {
        svg.append(s('text', {x: W / 2, y: H / 2, class: 'empty', 'text-anchor': 'middle'}, 'no epochs yet'));
      }
      const barW = Math.max(2, ((W - L - R) / Math.max(1, x1 - x0)) * 0.6 / Math.max(1, series.length));
      series.forEach((se, k) => {
        const color = se.color || PALETTE[k % PALETTE.length];
        const good = se.points.filter((p) => isFinite(p[0]) && isFinite(p[1]));
        const g = s('g', {'data-series': se.name, class: 'series'});
        if (this.kind === 'line') {
          for (const run of runs(se.points)) {
            g.append(s('polyline', {points: run.map((p) => `${px(p[0]).toFixed(1)},${py(p[1]).toFixed(1)}`).join(' '),
              stroke: color, class: se.dashed ? 'line dashed' : 'line'}));
          }
        }
        for (const p of good) {
          const tip = s('title', null, `${se.name} epoch ${p[0]}: ${Number(p[1].toPrecision(5))}`);
          if (this.kind === 'bar') {
            const x = px(p[0]) - (barW * series.length) / 2 + k * barW;
            g.append(s('rect', {x, y: py(p[1]), width: barW, height: Math.max(0, py(y0) - py(p[1])), fill: color,
              class: 'pt bar'}, tip));
          } else {
            g.append(s('circle', {cx: px(p[0]), cy: py(p[1]), r: 3, fill: color, class: 'pt'}, tip));
          }
        }
        svg.append(g);
      });
      this.legend.replaceChildren(...series.map((se, k) => h('span', {class: 'key'},
        s('svg', {viewBox: '0 0 20 6', class: 'swatch'}, s('line', {x1: 0, x2: 20, y1: 3, y2: 3,
          stroke: se.color || PALETTE[k % PALETTE.length], class: se.dashed ? 'line dashed' : 'line'})),
        se.name)));
    }
  }

  Object.assign(BA, {Chart, PALETTE, chartTicks: ticks});
})(window.BA);
