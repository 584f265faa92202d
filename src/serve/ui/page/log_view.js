// The live log pane of a job (stdout.txt / stderr.txt). It starts at the file's tail, follows new
// bytes while scrolled to the bottom, stops when the user scrolls up (or presses Pause) and loads
// earlier bytes on request. The pane is a <pre> holding only text nodes, one per fetched chunk:
// output is never parsed as markup. ANSI escape sequences are dropped, "\r" rewrites the current
// line, other control characters and bidi overrides are shown as visible symbols. At most ~2 MB
// or 20,000 lines stay in the DOM; older chunks are dropped from the top.
'use strict';
(function (BA) {
  const {h, setText, fmtBytes} = BA;
  const MAX_CHARS = 2_000_000, MAX_LINES = 20_000, CHUNKS_PER_TICK = 8;

  const CSI = /\x1b\[[0-?]*[ -/]*[@-~]/g, OSC = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, ESC2 = /\x1b[@-Z\\-_]/g;
  const PARTIAL = /(?:\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*)?|\r)$/;
  const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;
  const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

  // Bytes of output as text the page may show. `carry` keeps an escape sequence or "\r" cut by
  // the chunk boundary for the next chunk.
  function clean(text, state) {
    text = (state.carry || '') + text;
    const m = state.keepPartial ? PARTIAL.exec(text) : null;
    state.carry = m && m[0].length < 256 ? m[0] : '';
    if (state.carry) text = text.slice(0, text.length - state.carry.length);
    return text.replace(OSC, '').replace(CSI, '').replace(ESC2, '').replace(/\r\n/g, '\n')
      .replace(CONTROL, (c) => (c === '\x7f' ? '\u2421' : String.fromCharCode(0x2400 + c.charCodeAt(0))))
      .replace(BIDI, (c) => `\u27e8U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}\u27e9`);
  }
  // Within one line, "\r" starts it over: only what follows the last one stays.
  const afterCr = (line) => line.slice(line.lastIndexOf('\r') + 1);
  const countLines = (t) => {
    let n = 0;
    for (let i = t.indexOf('\n'); i >= 0; i = t.indexOf('\n', i + 1)) n++;
    return n;
  };

  class LogView {
    constructor(params) {
      this.params = params;
      this.file = 'stdout.txt';
      this.paused = false;
      this.pre = h('pre', {class: 'log', tabindex: '0', 'aria-label': 'job output'});
      this.status = h('span', {class: 'muted log-status'});
      this.tabs = ['stdout.txt', 'stderr.txt'].map((f) => {
        const b = h('button', {type: 'button', class: 'tab', 'data-file': f}, f);
        b.addEventListener('click', () => { this.file = f; this.reset(); BA.poller.kick(); });
        return b;
      });
      this.pauseButton = h('button', {type: 'button', class: 'pause'}, 'Pause');
      this.pauseButton.addEventListener('click', () => {
        this.paused = !this.paused;
        setText(this.pauseButton, this.paused ? 'Resume' : 'Pause');
        if (!this.paused) this.follow();
      });
      this.followButton = h('button', {type: 'button', class: 'follow'}, 'Follow');
      this.followButton.addEventListener('click', () => this.follow());
      this.earlierButton = h('button', {type: 'button', class: 'earlier'}, 'Earlier');
      this.earlierButton.addEventListener('click', () =>
        this.loadEarlier().catch((e) => setText(this.status, String(e.message || e))));
      this.pre.addEventListener('scroll', () => {
        const atBottom = this.pre.scrollTop + this.pre.clientHeight >= this.pre.scrollHeight - 8;
        if (atBottom !== this.following) { this.following = atBottom; this.showStatus(); }
      });
      this.el = h('div', {class: 'log-box'},
        h('div', {class: 'toolbar'}, ...this.tabs, h('span', {class: 'spacer'}), this.status, this.earlierButton,
          this.followButton, this.pauseButton),
        this.pre);
      this.reset();
    }
    reset() {
      this.pre.replaceChildren();
      this.tail = document.createTextNode('');  // the current, unfinished line
      this.pre.append(this.tail);
      this.nodes = [];   // {t: Text, lines} oldest first; the tail node is not among them
      this.chars = 0;
      this.lines = 0;
      this.start = null;  // byte offset of the first byte in the pane
      this.end = null;    // next byte offset to ask for
      this.size = 0;
      this.eof = false;
      this.following = true;
      this.state = {keepPartial: true, carry: ''};
      this.busy = false;
      this.readToEnd = false;
      for (const b of this.tabs) b.classList.toggle('active', b.dataset.file === this.file);
      this.showStatus();
    }
    follow() {
      this.following = true;
      this.pre.scrollTop = this.pre.scrollHeight;
      this.showStatus();
      BA.poller.kick();
    }
    showStatus() {
      const shown = this.start === null ? 'no bytes yet'
        : `bytes ${this.start.toLocaleString()}–${this.end.toLocaleString()} of ${fmtBytes(this.size)}`;
      const mode = this.paused ? 'paused' : this.following ? 'following' : 'not following (scrolled up)';
      setText(this.status, `${shown} · ${mode}`);
      this.followButton.disabled = this.following && !this.paused;
      this.earlierButton.disabled = !this.start;
    }
    async refresh(jobDone, files) {
      if (this.busy || this.paused || !this.following || !files.includes(this.file)) return;
      if (jobDone && this.readToEnd) return;  // a finished job's file was read to its end
      this.busy = true;
      try {
        for (let i = 0; i < CHUNKS_PER_TICK; i++) {
          const q = Object.assign({file: this.file}, this.end === null ? {tail: 1} : {offset: this.end});
          const r = await BA.get('job/log', Object.assign({}, this.params, q));
          if (this.start === null) this.start = r.offset;
          this.size = r.size;
          this.eof = r.eof;
          this.append(r.text || '', r.nextOffset);
          this.end = r.nextOffset;
          if (r.eof || !r.text) {
            this.readToEnd = jobDone;
            break;
          }
        }
      } catch (e) {
        if (!(e instanceof BA.HttpError && e.status === 404)) throw e;
        this.size = 0;  // no such file yet: the job has not started
      } finally {
        this.busy = false;
        // Once per refresh, not per chunk: each scroll lays out the whole pane (a 1 MB line is slow).
        if (this.following) this.pre.scrollTop = this.pre.scrollHeight;
        this.showStatus();
      }
    }
    // New bytes at the end.
    append(raw, nextOffset) {
      if (!raw) return;
      const text = clean(raw, this.state);
      const parts = text.split('\n');
      const first = parts.shift();
      const cr = first.lastIndexOf('\r');
      let current = cr >= 0 ? first.slice(cr + 1) : this.tail.data + first;
      if (cr >= 0) this.dropUnfinishedLine();
      if (parts.length) {
        const done = [current, ...parts.slice(0, -1).map(afterCr)].join('\n') + '\n';
        const node = document.createTextNode(done);
        this.pre.insertBefore(node, this.tail);
        // The node ends at the chunk's last newline: its byte offset, for "Earlier" after a trim.
        const rest = raw.slice(raw.lastIndexOf('\n') + 1);
        this.nodes.push({t: node, lines: parts.length, to: nextOffset - new TextEncoder().encode(rest).length});
        this.chars += done.length;
        this.lines += parts.length;
        current = afterCr(parts[parts.length - 1]);
      }
      if (current.length > MAX_CHARS) current = '\u2026' + current.slice(current.length - MAX_CHARS + 1);
      this.tail.data = current;
      this.trim();
    }
    // "\r" after an unfinished line: the line (already in the tail node) starts over.
    dropUnfinishedLine() { this.tail.data = ''; }
    trim() {
      while (this.nodes.length && (this.chars + this.tail.data.length > MAX_CHARS || this.lines > MAX_LINES)) {
        const n = this.nodes.shift();
        this.chars -= n.t.data.length;
        this.lines -= n.lines;
        n.t.remove();
        if (n.to !== undefined) this.start = n.to;
      }
    }
    async loadEarlier() {
      if (!this.start) return;
      if (this.chars + 65536 > MAX_CHARS || this.lines >= MAX_LINES) {
        setText(this.status, 'the pane holds ~2 MB; read earlier bytes with the CLI command above');
        return;
      }
      const r = await BA.get('job/log', Object.assign({}, this.params, {file: this.file, before: this.start}));
      const text = clean(r.text || '', {keepPartial: false}).split('\n').map(afterCr).join('\n');
      const node = document.createTextNode(text);
      const keepBottom = this.pre.scrollHeight - this.pre.scrollTop;
      this.pre.insertBefore(node, this.pre.firstChild);
      this.nodes.unshift({t: node, lines: countLines(text), to: r.nextOffset});
      this.chars += text.length;
      this.lines += countLines(text);
      this.start = r.offset;
      this.pre.scrollTop = this.pre.scrollHeight - keepBottom;  // the lines being read stay put
      this.showStatus();
    }
  }

  Object.assign(BA, {LogView, cleanLog: clean});
})(window.BA);
