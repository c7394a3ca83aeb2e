// fluxsim review: filter, views, theme and keys. Reads the page only: no data of the
// repository is in this script.
(function () {
  'use strict';
  var root = document.documentElement;
  var filter = document.getElementById('filter');
  var count = document.getElementById('count');
  var navLeaves = Array.prototype.slice.call(document.querySelectorAll('#nav .leaf'));
  var groups = Array.prototype.slice.call(document.querySelectorAll('.group'));
  var current = -1;

  function target(li) { return document.getElementById(li.getAttribute('data-ref')); }
  function words(q) { return q.toLowerCase().split(/\s+/).filter(function (w) { return w; }); }

  function apply() {
    var ws = words(filter.value);
    var shown = 0;
    navLeaves.forEach(function (li) {
      var text = li.getAttribute('data-text') || '';
      var ok = ws.every(function (w) { return text.indexOf(w) !== -1; });
      li.hidden = !ok;
      var t = target(li);
      if (t) { t.hidden = !ok; }
      if (ok) { shown += 1; }
    });
    // A cluster or unit is shown while one of its leaves is.
    for (var i = groups.length - 1; i >= 0; i -= 1) {
      var g = groups[i];
      g.hidden = !g.querySelector('.leaf:not([hidden])');
    }
    count.textContent = shown + ' of ' + navLeaves.length + ' shown';
    try {
      history.replaceState(null, '', filter.value ? '#q=' + encodeURIComponent(filter.value) : '#');
    } catch (e) { /* a file: page may refuse; the filter still works */ }
  }

  function visible() { return navLeaves.filter(function (li) { return !li.hidden; }); }

  function select(li) {
    navLeaves.forEach(function (x) {
      x.classList.remove('current');
      var t = target(x);
      if (t) { t.classList.remove('current'); }
    });
    li.classList.add('current');
    var t = target(li);
    if (t) {
      t.classList.add('current');
      t.scrollIntoView({ block: 'start' });
      t.focus({ preventScroll: true });
    }
    li.scrollIntoView({ block: 'nearest' });
  }

  function step(d) {
    var v = visible();
    if (!v.length) { return; }
    var at = v.indexOf(navLeaves[current]);
    at = at === -1 ? (d > 0 ? 0 : v.length - 1) : Math.min(v.length - 1, Math.max(0, at + d));
    current = navLeaves.indexOf(v[at]);
    select(v[at]);
  }

  function setView(unified) {
    root.classList.toggle('unified', unified);
    document.getElementById('view-split').setAttribute('aria-pressed', String(!unified));
    document.getElementById('view-unified').setAttribute('aria-pressed', String(unified));
  }

  var themes = ['auto', 'dark', 'light'];
  function setTheme(t) {
    if (t === 'auto') { root.removeAttribute('data-theme'); } else { root.setAttribute('data-theme', t); }
    document.getElementById('theme').textContent = 'Theme: ' + t;
    try { localStorage.setItem('fluxsim-review-theme', t); } catch (e) { /* no storage */ }
  }
  function theme() { return root.getAttribute('data-theme') || 'auto'; }

  filter.addEventListener('input', apply);
  document.getElementById('view-split').addEventListener('click', function () { setView(false); });
  document.getElementById('view-unified').addEventListener('click', function () { setView(true); });
  document.getElementById('theme').addEventListener('click', function () {
    setTheme(themes[(themes.indexOf(theme()) + 1) % themes.length]);
  });
  navLeaves.forEach(function (li, i) {
    var a = li.querySelector('a');
    if (a) { a.addEventListener('click', function () { current = i; select(li); }); }
  });
  document.addEventListener('keydown', function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (e.target === filter) {
      if (e.key === 'Escape') { filter.value = ''; apply(); filter.blur(); }
      if (e.key === 'Enter') { filter.blur(); step(1); }
      return;
    }
    if (e.key === 'j') { e.preventDefault(); step(1); }
    else if (e.key === 'k') { e.preventDefault(); step(-1); }
    else if (e.key === '/') { e.preventDefault(); filter.focus(); filter.select(); }
    else if (e.key === 'u') { setView(!root.classList.contains('unified')); }
    else if (e.key === 't') { document.getElementById('theme').click(); }
  });

  try {
    var saved = localStorage.getItem('fluxsim-review-theme');
    if (saved && themes.indexOf(saved) !== -1) { setTheme(saved); }
  } catch (e) { /* no storage */ }
  var m = /^#q=(.*)$/.exec(location.hash);
  if (m) {
    try { filter.value = decodeURIComponent(m[1]); } catch (e) { filter.value = ''; }
  }
  apply();
  root.classList.add('js');
}());
