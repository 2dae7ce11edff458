// The app's chart element (ui/chart.py mounts it, once per chart, in the page's own DOM): the
// figure arrives as JSON bytes, {"lib": URL of plotly.js, "config": …, "figure": …}, and plotly.js,
// loaded once per page, draws it. A rerun that sends the same bytes draws nothing (a zoom stays).
export default function(component) {
  const { data, parentElement } = component;
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data || []);
  let div = parentElement.querySelector(':scope > .microscope-chart');
  if (div && same(div.__bytes, bytes)) return () => {};
  let sent;
  try {
    sent = JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    return () => {};  // not a figure: nothing drawn (the server sends only what ui/chart.py made)
  }
  if (!div) {
    div = document.createElement('div');
    div.className = 'microscope-chart';
    parentElement.appendChild(div);
  }
  div.__bytes = bytes;
  div.style.width = '100%';
  div.style.height = (sent.figure.layout && sent.figure.layout.height || 450) + 'px';
  let gone = false, observer = null;
  plotly(sent.lib).then((Plotly) => {
    if (gone) return;
    const config = {...sent.config, responsive: false, displaylogo: false,
                    modeBarButtonsToRemove: ['lasso2d', 'select2d', 'sendDataToCloud']};
    if (!config.staticPlot) config.modeBarButtonsToAdd = [fullscreen(div, Plotly)];
    Plotly.react(div, sent.figure.data, sent.figure.layout, config);
    let queued = false;  // one resize a frame, as the column's width settles
    observer = new ResizeObserver(() => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => { queued = false; if (div.isConnected && div._fullLayout) Plotly.Plots.resize(div); });
    });
    observer.observe(div);
  });
  return () => { gone = true; if (observer) observer.disconnect(); };
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

// Plotly's modebar button that fills the window with the chart, and Esc or the button again brings it back
function fullscreen(div, Plotly) {
  const path = 'M32 32h128v64H96v64H32zM352 32h128v128h-64V96h-64zM32 352h64v64h64v64H32zM416 352h64v128H352v-64h64z';
  const toggle = () => {
    const on = !div.classList.contains('microscope-fullscreen');
    div.classList.toggle('microscope-fullscreen', on);
    Object.assign(div.style, on ? {position: 'fixed', inset: '0', zIndex: 1000, background: 'white', height: '100vh'}
                                : {position: '', inset: '', zIndex: '', background: '',
                                   height: (div.layout && div.layout.height || 450) + 'px'});
    Plotly.relayout(div, {height: on ? window.innerHeight : (div.__height || div.layout.height)});
  };
  div.__height = div.__height || (div.layout && div.layout.height);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && div.classList.contains('microscope-fullscreen')) toggle();
  });
  return {name: 'Fullscreen', title: 'Fullscreen', icon: {width: 512, height: 512, path}, click: toggle};
}
