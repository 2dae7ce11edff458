// The app's chart element (ui/chart.py mounts it, once per chart, in the page's own DOM): the
// figure arrives as JSON bytes, {"lib": URL of plotly.js, "config": …, "figure": …}, and plotly.js,
// loaded once per page, draws it. A rerun that sends the same bytes draws nothing (a zoom stays).
export default function(component) {
  const { data, parentElement } = component;
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data || []);
  let div = parentElement.querySelector(':scope > .microscope-chart');
  if (div && same(div.__want, bytes)) return undefined;  // drawn, or on its way
  let sent;
  try {
    sent = JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    return undefined;  // not a figure: nothing drawn (the server sends only what ui/chart.py made)
  }
  if (!div) {
    div = document.createElement('div');
    div.className = 'microscope-chart';
    div.style.width = '100%';
    parentElement.appendChild(div);
  }
  div.__want = bytes;  // the latest figure: one still waiting for plotly.js is not drawn after it
  const height = (sent.figure.layout && sent.figure.layout.height || 450) + 'px';
  div.style.height = height;
  plotly(sent.lib).catch(() => null).then((Plotly) => {
    if (div.__want !== bytes) return;
    if (!Plotly) {  // said where the chart would be; the next rerun tries again
      div.__want = null;
      div.style.height = 'auto';
      div.textContent = 'This chart could not be drawn: its drawing code (plotly.js) did not load. Reload the page.';
      return;
    }
    if (!div._fullLayout) { div.textContent = ''; div.style.height = height; }  // after a message
    Plotly.react(div, sent.figure.data, sent.figure.layout, options(sent.config, div, Plotly));
    if (sent.warm) warmUp(Plotly, sent.warm);
    if (!div.__resize) {  // one resize a frame, as the column's width settles
      let queued = false;
      div.__resize = new ResizeObserver(() => {
        if (queued) return;
        queued = true;
        requestAnimationFrame(() => { queued = false; if (div.isConnected && div._fullLayout) Plotly.Plots.resize(div); });
      });
      div.__resize.observe(div);
    }
  });
  return undefined;
}

function options(config, div, Plotly) {
  const out = {...config, responsive: false, displaylogo: false,
               modeBarButtonsToRemove: ['lasso2d', 'select2d', 'sendDataToCloud', 'sendChartToCloud']};
  if (!out.staticPlot && div.requestFullscreen) out.modeBarButtonsToAdd = [fullscreen(div, Plotly)];  // not on an iPhone
  return out;
}

// plotly.js compiles its code as it first runs it: a page's first token map drew in about twice the
// time of its next ones (ui.figures.preload_plotly). Once a page, when it is idle, a small map of
// the same kind is drawn out of sight, one of its buttons pressed, and removed.
function warmUp(Plotly, fig) {
  if (window.__microscopeWarmed) return;
  window.__microscopeWarmed = 'pending';
  const idle = window.requestIdleCallback || ((f) => setTimeout(f, 100));
  idle(() => {
    // a page that has drawn a chart of its own by now is warm, and a hidden map beside it would only be in the way
    if (document.querySelector('[data-testid=stMain] .js-plotly-plot')) { window.__microscopeWarmed = 'done'; return; }
    const div = document.createElement('div');
    div.setAttribute('aria-hidden', 'true');
    div.inert = true;
    div.style.cssText = 'position:fixed;left:-10000px;top:0;width:900px;visibility:hidden;pointer-events:none';
    document.body.appendChild(div);
    const done = () => { Plotly.purge(div); div.remove(); window.__microscopeWarmed = 'done'; };
    const button = ((fig.layout.updatemenus || [])[0] || {buttons: []}).buttons[1];
    Plotly.newPlot(div, fig.data, fig.layout, options({}, div, Plotly))
      .then(() => button && Plotly.update(div, ...button.args))
      .then(done, done);
  }, {timeout: 2000});
}

function same(a, b) {
  if (!a || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function plotly(url) {
  if (!window.__microscopePlotly) {
    window.__microscopePlotly = new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = new URL(url, document.baseURI).href;
      s.onload = () => resolve(window.Plotly);
      s.onerror = () => { window.__microscopePlotly = null; reject(new Error('plotly.js did not load')); };
      document.head.appendChild(s);
    });
  }
  return window.__microscopePlotly;
}

// Plotly's modebar button that shows the chart alone on the screen (the browser's full screen: Esc,
// or the button again, ends it)
function fullscreen(div, Plotly) {
  const path = 'M32 32h128v64H96v64H32zM352 32h128v128h-64V96h-64zM32 352h64v64h64v64H32zM416 352h64v128H352v-64h64z';
  if (!div.__fullscreen) {
    div.__fullscreen = () => {
      const on = document.fullscreenElement === div;
      div.style.background = on ? 'white' : '';
      Plotly.relayout(div, {height: on ? window.innerHeight : parseInt(div.style.height, 10)})
        .then(() => Plotly.Plots.resize(div));
    };
    div.addEventListener('fullscreenchange', div.__fullscreen);
  }
  return {name: 'Fullscreen', title: 'Fullscreen', icon: {width: 512, height: 512, path},
          click: () => (document.fullscreenElement === div ? document.exitFullscreen() : div.requestFullscreen()).catch(() => {})};
}
