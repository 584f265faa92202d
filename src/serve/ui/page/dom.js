// DOM helpers for the whole page. Every string from the server reaches the page through
// textContent or a constant attribute name: there is no HTML parsing anywhere (the CSP's Trusted
// Types would refuse it anyway), so job output and resource names are always shown as text.
'use strict';
window.BA = window.BA || {};
(function (BA) {
  const SVG_NS = 'http://www.w3.org/2000/svg';

  // h('div', {class: 'x', title: t}, child, 'text', ...): an element; strings become text nodes.
  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    setAttrs(e, attrs);
    append(e, children);
    return e;
  }
  function s(tag, attrs, ...children) {
    const e = document.createElementNS(SVG_NS, tag);
    setAttrs(e, attrs);
    append(e, children);
    return e;
  }
  function setAttrs(e, attrs) {
    if (!attrs) return;
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) throw new Error('event handlers go through addEventListener');
      e.setAttribute(k, v === true ? '' : String(v));
    }
  }
  function append(e, children) {
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }
  // Sets text only when it changed, so selections inside unchanged cells survive a refresh.
  function setText(e, text) {
    const t = text === undefined || text === null ? '' : String(text);
    if (e.textContent !== t) e.textContent = t;
  }
  function setClass(e, cls) {
    if (e.getAttribute('class') !== cls) e.setAttribute('class', cls);
  }
  // Only same-origin paths become links: a server bug can never produce a javascript: URL.
  function safeHref(url) {
    return typeof url === 'string' && url.startsWith('/') && !url.startsWith('//') ? url : null;
  }
  function route(...parts) {
    return '#/' + parts.map((p) => encodeURIComponent(String(p))).join('/');
  }
  function link(href, text, attrs) {
    return h('a', Object.assign({href}, attrs || {}), text);
  }

  // Keyed in-place table body: rows are created once per key, updated cell by cell, reordered by
  // moving nodes. `make(item)` returns a <tr>, `update(tr, item)` refreshes its cells; `empty` is
  // the note shown when there are no items.
  function syncRows(tbody, items, key, make, update, empty) {
    const old = tbody._rows || new Map();
    const next = new Map();
    let cursor = tbody.firstChild;
    for (const item of items) {
      const k = key(item);
      let tr = old.get(k);
      if (!tr) tr = make(item);
      update(tr, item);
      next.set(k, tr);
      if (tr !== cursor) tbody.insertBefore(tr, cursor);
      else cursor = cursor.nextSibling;
    }
    // Everything after the last kept row is stale (old rows, an "empty" note).
    while (cursor) {
      const n = cursor.nextSibling;
      cursor.remove();
      cursor = n;
    }
    tbody._rows = next;
    if (!items.length && empty) tbody.append(h('tr', null, h('td', {colspan: 20, class: 'muted'}, empty)));
  }

  function fmtTime(iso) {
    if (!iso) return '';
    const d = new Date(iso);
    if (isNaN(d)) return String(iso);
    const p = (n) => String(n).padStart(2, '0');
    const day = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
    return `${day} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  }
  function fmtDuration(fromIso, toIso) {
    if (!fromIso) return '';
    const a = Date.parse(fromIso), b = toIso ? Date.parse(toIso) : Date.now();
    if (isNaN(a) || isNaN(b) || b < a) return '';
    let sec = Math.round((b - a) / 1000);
    const hr = Math.floor(sec / 3600), min = Math.floor((sec % 3600) / 60);
    sec %= 60;
    return hr ? `${hr}h ${min}m` : min ? `${min}m ${sec}s` : `${sec}s`;
  }
  function fmtNum(v, digits) {
    if (typeof v !== 'number' || !isFinite(v)) return '';
    return digits === undefined ? String(v) : v.toFixed(digits);
  }
  function fmtBytes(n) {
    if (typeof n !== 'number') return '';
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (n >= 1024 && i < u.length - 1) n /= 1024, i++;
    return (i ? n.toFixed(1) : String(n)) + ' ' + u[i];
  }
  const STATES = ['queued', 'running', 'terminating', 'succeeded', 'failed'];
  function stateBadge(state) {
    return h('span', {class: 'badge st-' + cssWord(state)}, state || '');
  }
  // A state word as a class suffix; anything unexpected becomes "other".
  function cssWord(w) {
    return /^[a-z]{1,20}$/i.test(String(w)) ? String(w).toLowerCase() : 'other';
  }
  function updateBadge(e, state) {
    setClass(e, 'badge st-' + cssWord(state));
    setText(e, state);
  }

  // The batchai command that prints what a view shows, with a copy button.
  function cliBox() {
    const code = h('code');
    const button = h('button', {type: 'button', class: 'copy'}, 'Copy');
    const box = h('div', {class: 'cli'}, h('span', {class: 'muted'}, 'CLI'), code, button);
    button.addEventListener('click', async () => {
      const text = code.textContent;
      try {
        if (navigator.clipboard && window.isSecureContext) {
          await navigator.clipboard.writeText(text);
          setText(button, 'Copied');
        } else throw new Error('no clipboard');
      } catch (_) {
        const range = document.createRange();
        range.selectNodeContents(code);
        const sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        setText(button, 'Selected');
      }
      setTimeout(() => setText(button, 'Copy'), 1500);
    });
    box.set = (text) => setText(code, text || '');
    return box;
  }

  Object.assign(BA, {h, s, setText, setClass, safeHref, route, link, syncRows, fmtTime, fmtDuration, fmtNum,
    fmtBytes, STATES, stateBadge, updateBadge, cssWord, cliBox});
})(window.BA);
