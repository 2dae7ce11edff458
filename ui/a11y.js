// What Streamlit and Plotly leave out for keyboard and screen-reader users (ui/a11y.py mounts it
// once per run; it runs in the page, no HTML of its own). CSS is the stylesheet ui/a11y.py hands
// over. Every 250 ms, and when a chart is redrawn, ``tend`` puts names, states and the focus right.
export default function(component) {
  const { data } = component;
  if (!document.getElementById('microscope-a11y-css')) {
    const s = document.createElement('style'); s.id = 'microscope-a11y-css'; s.textContent = CSS;
    document.head.appendChild(s);
  }
  const region = (id, role) => {  // a visually hidden live region of our own
    let r = document.getElementById(id);
    if (!r) {
      r = document.createElement('div'); r.id = id; r.className = 'microscope-live';
      r.setAttribute('aria-live', 'polite'); if (role) r.setAttribute('role', role); document.body.appendChild(r);
    }
    return r;
  };
  const live = region('microscope-live'), status = region('microscope-status', 'status');
  const now = () => Date.now();
  if (!window.__microscopeWatch) {
    window.__microscopeWatch = true;
    // the button to keep focused across redraws is the one last focused (the layer row after a
    // head: a head's exact map arriving then must not pull the focus back); elsewhere, none
    document.addEventListener('focusin', (e) => {
      const menu = e.target.classList && e.target.classList.contains('updatemenu-button');
      const label = menu && e.target.getAttribute('aria-label');
      if (!menu) window.__microscopeFocus = null;
      else if (label) window.__microscopeFocus = {label};
    });
    document.addEventListener('pointerdown', () => { window.__microscopeFocus = null; });
    // where the focus should land when what had it goes away: remembered at the press
    const intent = (e) => {
      if (e.type === 'keydown' && e.key !== 'Enter' && e.key !== ' ') return;
      const t = e.target.closest && e.target.closest('button, a');
      if (!t) return;
      const name = t.textContent.trim();
      if (/(Summarize|Try an example)$/.test(name)) {  // said at once: the run starts on the server
        window.__microscopeRunning = {at: now(), seen: false};
        document.getElementById('microscope-status').textContent = 'Summarizing: running BERT and the sentence encoder…';
      }
      if (/Try an example$/.test(name) || t.matches('[data-testid=stSidebarNavLink]')) {
        const was = document.querySelector('[data-testid=stMain] h1');
        window.__microscopeWant = {heading: true, at: now(), was: was ? was.textContent : null};
      } else if (t.closest('[data-testid=stDownloadButton]')) {
        window.__microscopeWant = {button: name, at: now()};
      } else if (t.matches('[data-testid=stPopoverButton]')) {
        window.__microscopeWant = {popover: true, at: now()};
      }
    };
    document.addEventListener('keydown', intent, true);
    document.addEventListener('click', intent, true);
  }
  const press = (el) => el.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  // a number names a head, or a layer on the menu named 'layer' (viz.attention.token_heatmap)
  const buttonName = (b, menu) => { const t = b.textContent.trim(); return /^\d+$/.test(t) ? (menu || 'head') + ' ' + t : t; };
  const lost = () => !document.activeElement || document.activeElement === document.body;

  // head buttons wider than a narrow chart (a phone, 200 % zoom): flowed into rows that fit, from
  // the chart's left edge, in the top margin Plotly left for them (Plotly's menus do not wrap)
  const flow = (gd, buttons, groups) => {
    const W = gd.getBoundingClientRect().width, right = gd.getBoundingClientRect().right;
    const placed = buttons.map((b) => (b.getAttribute('transform') || '').match(/translate\(([-\d.]+),\s*([-\d.]+)\)/));
    if (!W || placed.some((m) => !m)) return;
    const ours = gd.__flowedAt === W && buttons.every((b, i) => b.getAttribute('transform') === gd.__flowed[i]);
    if (ours || !buttons.some((b) => b.getBoundingClientRect().right > right + 1)) return;
    const top = Math.min(...placed.map((m) => parseFloat(m[2])));
    let x = 4, y = top, row = 0;
    gd.__flowed = buttons.map((b, i) => {
      const r = b.querySelector('rect'), w = parseFloat(r.getAttribute('width')), h = parseFloat(r.getAttribute('height'));
      const next = i > 0 && groups[i] !== groups[i - 1];  // the head buttons start a row below the layer buttons
      if ((x + w > W - 4 || next) && x > 4) { x = 4; row += 1; y = top + row * (h + 2); }
      const t = `translate(${x},${y})`; x += w + 2;
      b.setAttribute('transform', t);
      return t;
    });
    gd.__flowedAt = W;
  };

  const tend = () => {
    for (const gd of document.querySelectorAll('.js-plotly-plot')) {
      if (gd.layout && gd.layout.meta && gd.layout.meta.decorative) { gd.setAttribute('aria-hidden', 'true'); continue; }
      const t = gd.querySelector('.gtitle');
      const name = ((t && t.textContent) || 'Chart').trim();
      if (!gd.__a11yRedraw && gd.on) {  // as soon as a redraw is drawn, not only on the next tick
        gd.__a11yRedraw = true; gd.on('plotly_afterplot', () => setTimeout(tend, 0));
      }
      if (gd.getAttribute('aria-label') !== name) {
        gd.setAttribute('role', 'figure'); gd.setAttribute('aria-label', name);
        if (window.__microscopeAnnounce && now() - window.__microscopeAnnounce < 10000) live.textContent = name;
      }
      // whether each button is the head shown: Plotly draws every menu's buttons in menu order
      const menus = (gd._fullLayout && gd._fullLayout.updatemenus) || [];
      const shown = menus.flatMap((menu) => (menu.buttons || []).map((_, k) => menu.active === k));
      const groups = menus.flatMap((menu) => (menu.buttons || []).map(() => menu.name || 'head'));
      const buttons = [...gd.querySelectorAll('.updatemenu-button')];
      buttons.forEach((b, i) => { b.__pressed = !!shown[i]; });
      buttons.forEach((b, i) => {
        const named = 'Show ' + buttonName(b, groups[i]);  // Plotly may rebind a button to another head on redraw
        if (b.getAttribute('aria-label') !== named) {
          b.setAttribute('tabindex', '0'); b.setAttribute('role', 'button'); b.setAttribute('aria-label', named);
        }
        const pressed = b.__pressed ? 'true' : 'false';
        if (b.getAttribute('aria-pressed') !== pressed) b.setAttribute('aria-pressed', pressed);
        b.classList.toggle('microscope-shown', b.__pressed);
        if (b.__a11y) return;
        b.__a11y = true;
        b.addEventListener('keydown', (e) => {
          let target = null;
          if (e.key === 'Enter' || e.key === ' ') target = b;
          const all = [...gd.querySelectorAll('.updatemenu-button')], k = all.indexOf(b);
          if (e.key === 'ArrowRight') target = all[Math.min(k + 1, all.length - 1)];
          if (e.key === 'ArrowLeft') target = all[Math.max(k - 1, 0)];
          if (!target) return;
          e.preventDefault();
          window.__microscopeAnnounce = now();
          window.__microscopeFocus = {label: target.getAttribute('aria-label')};
          target.focus(); press(target);
        });
      });
      flow(gd, buttons, groups);
      // the mode bar's buttons are out of the Tab order (8 a chart): the sidebar's Figure
      // downloads panel downloads any chart by keyboard; named for a screen reader all the same
      for (const a of gd.querySelectorAll('.modebar-btn')) {
        if (a.__a11y) continue;
        a.__a11y = true;
        a.setAttribute('tabindex', '-1'); a.setAttribute('role', 'button');
        a.setAttribute('aria-label', a.getAttribute('data-title') || 'chart tool');
      }
    }
    // the collapsed sidebar slides off-screen but kept its controls in the Tab order: inert there
    const side = document.querySelector('[data-testid=stSidebar]');
    if (side) {
      const away = side.getBoundingClientRect().right <= 1;
      if (side.inert !== away) side.inert = away;
      if (!side.__a11y) {  // at once when it slides in or out, not on the next tick
        side.__a11y = true;
        side.addEventListener('transitionend', () => tend());
        new MutationObserver(() => setTimeout(tend, 0)).observe(side, {attributes: true});
      }
    }
    // Summarize: said when it starts (at the press) and, once the server's run is over, what it
    // produced (Streamlit's spinner and result are in no live region)
    const run = window.__microscopeRunning, busy = document.querySelector('[data-testid=stStatusWidget]');
    if (run && busy) run.seen = true;
    if (run && !busy && (run.seen || now() - run.at > 3000)) {
      window.__microscopeRunning = null;
      const result = [...document.querySelectorAll('[data-testid=stCaptionContainer]')].find((e) => /^Result for/.test(e.textContent.trim()));
      const error = document.querySelector('[data-testid=stMain] [data-testid=stAlertContentError]');
      status.textContent = error ? 'Summarize failed: ' + error.textContent.trim()
        : 'Summarized. ' + (result ? result.textContent.trim() : '');
    }
    const h = document.querySelector('[data-testid=stMain] h1');
    const want = window.__microscopeWant;
    if (want && now() - want.at > 20000) window.__microscopeWant = null;
    else if (want && want.heading && h && h.textContent !== want.was) {  // a page change, Try an example: its heading
      h.setAttribute('tabindex', '-1'); h.focus(); window.__microscopeWant = null;
    } else if (want && want.button && lost()) {  // a download: back to its button
      const b = [...document.querySelectorAll('[data-testid=stDownloadButton] button')].find((x) => x.textContent.trim() === want.button);
      if (b) { b.focus(); window.__microscopeWant = null; }
    } else if (want && want.popover) {  // a popover: its first field
      const field = document.querySelector('[data-testid=stPopoverBody] input, [data-testid=stPopoverBody] textarea');
      if (field && field.offsetParent) { field.focus(); window.__microscopeWant = null; }
    }
    // a chart redrawn by the server (a head's exact weights) rebuilds its buttons: keep the focus
    // (however long the server took) unless the user has since focused or clicked something else
    const f = window.__microscopeFocus;
    if (f && lost()) {
      const b = [...document.querySelectorAll('.updatemenu-button')].find((x) => x.getAttribute('aria-label') === f.label);
      if (b) b.focus();
    }
  };
  // the Figure downloads panel: download the named chart as the camera button would, once it is
  // drawn (the rerun that asks may mount the chart again)
  const download = () => {
    const d = window.__microscopeDownload;
    if (!d || d.done) return;
    const gd = [...document.querySelectorAll('.js-plotly-plot')].find((g) => g.getAttribute('aria-label') === d.name);
    const camera = gd && gd.querySelector('.modebar-btn[data-val="toImage"], .modebar-btn[data-title^="Download plot"]');
    if (camera) { d.done = true; press(camera); status.textContent = 'Downloading ' + d.name + '.'; }
    else if (now() - d.at > 10000) { d.done = true; status.textContent = 'That chart is not on the page any more.'; }
  };
  const d = data && data.download;
  if (d && d.nonce && (window.__microscopeDownload || {}).nonce !== d.nonce) {
    window.__microscopeDownload = {...d, at: now()};
  }
  tend(); download();
  const timer = setInterval(() => { tend(); download(); }, 250);
  return () => clearInterval(timer);
}
