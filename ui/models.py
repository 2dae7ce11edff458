"""Which models this server offers: the shipped weights (model/weights), the untrained scorer,
and those named at start (``streamlit run app.py -- --model NAME=BACKBONE_DIR[,CHECKPOINT]
--models FILE.toml``); their names in the pickers and their command-line arguments. Loading
them: ui.resources.get_model."""
from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st

UNTRAINED = "untrained (random scorer)"


def shipped_weights() -> list[str]:
    """Weights files shipped in model/weights (by file name), then the untrained scorer."""
    from model.load import WEIGHTS_DIR

    return sorted(p.name for p in WEIGHTS_DIR.glob("*") if p.suffix in (".safetensors", ".pt")) + [UNTRAINED]


def configured_models() -> dict:
    """The models named when the server started, ``streamlit run app.py -- --model
    NAME=BACKBONE_DIR[,CHECKPOINT] --models FILE.toml`` (model.load.ModelSpec): name → its spec,
    or → the one-line reason it cannot load (a bad argument, a missing file, a failed load)."""
    import sys

    failed = load_failures()
    return {name: failed.get(name, spec) for name, spec in _configured(tuple(sys.argv[1:])).items()}


@functools.lru_cache(maxsize=4)
def _configured(argv: tuple[str, ...]) -> dict:
    import argparse
    from dataclasses import replace

    from model.load import parse_model_spec, read_model_specs

    ap = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    ap.add_argument("--model", action="append", default=[])
    ap.add_argument("--models", action="append", default=[])
    args, _ = ap.parse_known_args(argv)
    out = {}
    specs = []
    for spec in args.model:
        try:
            specs.append(parse_model_spec(spec))
        except ValueError as e:
            out[spec] = str(e)
    for f in args.models:
        try:
            specs += read_model_specs(f)
        except ValueError as e:
            out[Path(f).name] = str(e)
    for m in specs:
        problem = m.problem()
        out[m.name] = problem or m
        if m.checkpoint and not problem:  # its plain backbone, for "what fine-tuning changed" and A/B
            plain = f"{m.name}{PLAIN}"
            out[plain] = replace(m, name=plain, checkpoint=None)
    for name in set(out) & set(shipped_weights()):
        out[name] = f"the name {name!r} is taken by a shipped model: pick another"
    return out


PLAIN = " (untrained scorer)"  # a configured model's plain backbone: "NAME (untrained scorer)"


def backbone_name(weights: str) -> str:
    """The picker's name of the plain backbone (an untrained scorer) under the model ``weights``."""
    return f"{weights}{PLAIN}" if f"{weights}{PLAIN}" in configured_models() else UNTRAINED


@st.cache_resource(show_spinner=False)
def load_failures() -> dict[str, str]:
    """Models of this server that failed to load: name → reason (not retried)."""
    return {}


def weights_choices() -> list[str]:
    """The model picker's names: the models configured at start first, then the shipped ones."""
    return list(configured_models()) + shipped_weights()


def model_arguments(weights: str) -> list[str]:
    """The command-line arguments of ``python -m analysis …`` that load the model named ``weights``
    (none: the shipped weights)."""
    from model.load import WEIGHTS_DIR, ModelSpec

    spec = configured_models().get(weights)
    if isinstance(spec, ModelSpec):
        return ["--model", f"{weights}={spec.backbone}" + (f",{spec.checkpoint}" if spec.checkpoint else "")]
    return ["--checkpoint", str(WEIGHTS_DIR / weights)] if weights in shipped_weights()[:-1] else []


def usable_models() -> list[str]:
    """The picker's names but those known not to load."""
    failed = {n for n, spec in configured_models().items() if isinstance(spec, str)}
    return [n for n in weights_choices() if n not in failed]


def default_model() -> str:
    """The first model that may load: a configured one if any, else the shipped weights."""
    return usable_models()[0]


def model_caption(model) -> str:
    """Backbone, size, weights and device of a loaded Summarizer, as sidebar Markdown."""
    from viz.common import markdown_text

    layers, heads, params = model.size()
    return (f"Backbone **{markdown_text(Path(model.backbone).name)}** · {layers} layers × {heads} heads · "
            f"{params / 1e6:,.0f} M parameters · scorer **{model.weights}** · sentence vectors "
            f"**{model.model.pooling}** · device **{markdown_text(model.device)}**")
