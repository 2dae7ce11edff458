"""Page 3: the TransformerInterEncoder's attention between sentences, beside the scores."""
import streamlit as st

import numpy as np

from ui.figures import figure, plot
from ui.runs import row_shares, run_mixing, with_maps
from ui.widgets import COLORSCALES, layer_head_pickers, need_trace
from ui.state import keep
from ui.view import INTER_SHOW, default
from viz.inter import inter_heatmap

trace = need_trace()
L2, H2, S = trace.inter_attention.shape[:3]
st.title("Sentence encoder")
source = "mean of each sentence's tokens" if trace.summary.pooling == "mean" else "[CLS] outputs"
st.caption(f"The {S} sentence vectors ({source} of BERT's top layer + sinusoidal position) pass through {L2} "
           f"Transformer layers with {H2} heads each, then a sigmoid gives each sentence its score. "
           "★ = selected for the summary.")
st.session_state.setdefault("inter_show", default("inter_show"))  # not default=: a lesson or class may set it
show = st.segmented_control(
    "Show", INTER_SHOW, key=keep("inter_show"), required=True,
    help="Attention: the softmax weights. Norm-weighted: ‖α f(x_j)‖, what sentence j actually adds through the head "
         "(Kobayashi et al. 2020), as each row's share. ALTI: each sentence's contribution to the layer's output, the "
         "residual counted (Ferrando et al. 2022; this encoder normalises before attention, so nothing is "
         "approximated), per layer or composed over both layers.") or "attention"
if show == "score by layer":  # where the choice is made (issue 61): no head or layer to pick
    from analysis.layers import layer_scores
    from ui.resources import get_model
    from ui.runs import cached
    from ui import state
    from viz.layers import score_by_layer

    params = state.params()
    read = cached("layer_scores", params, lambda: layer_scores(get_model(params["weights"], params["device"]),
                                                              params["text"], params.get("mask_heads", ())))
    lens = st.segmented_control("BERT's layers read", ["tuned", "raw"], key=keep("inter_lens"), required=True,
                                help="Tuned: each layer's sentence vectors mapped first to where the top layer's "
                                     "land (fitted on training documents). Raw: as they are.") or "tuned"
    if lens == "tuned" and read["bert_tuned"] is None:
        st.info("No tuned lens fits this model (model/weights/tuned_lens.safetensors is for the shipped weights): "
                "BERT's layers are read raw.")
        lens = "raw"
    plot(score_by_layer(read["sentences"], read["selected"], read[f"bert_{lens}"], read["inter"], lens),
         key="inter_layers")
    r2, where = read["lens"].get("r2_test"), "on 100 BBC test documents, never used to fit or choose it,"
    if not r2:
        r2, where = read["lens"].get("r2_validation"), "on held-out documents"
    st.caption("After the sentence encoder's last layer the reading is the model's score, exactly. Before it, a "
               "reading shows when a sentence's fate is settled: a sentence that is already ahead after BERT's 3rd "
               "layer was chosen on what those layers see. **Raw** readings of BERT's lower layers put vectors the "
               "sentence encoder was never trained on through it: they say what the scorer makes of them, not what "
               "the layer \"thinks\" (the logit lens; nostalgebraist 2020). **Tuned** readings first map each "
               "layer's vectors to where the top layer's land (the tuned lens; Belrose et al. 2023)"
               + (f": {where} the map explains {', '.join(f'{x:.0%}' for x in r2)} of the top layer's "
                  "vectors, layer by layer." if r2 else "."))
    st.stop()
level = None
if show == "ALTI":  # per layer or composed over all layers: no head to pick, nor a layer when composed
    level = st.radio("ALTI", ["this layer", "composed"], horizontal=True, key=keep("inter_alti"),
                     help="ALTI measures a whole layer (every head, the residual and LayerNorm), so it has no "
                          "head; composed runs over every layer, so it has no layer either.")
c = st.columns(3)
if level == "composed":
    layer = head = None
else:
    layer, head = layer_head_pickers(L2, H2, "inter", cols=c[:2], pick_head=show != "ALTI")
colorscale = c[2].selectbox("Colour scale", COLORSCALES, key=keep("inter_colors"))
if show == "attention":
    plot(figure(inter_heatmap, trace, layer, head, colorscale=colorscale), key="inter_heatmap")
else:
    mix = run_mixing(trace)
    if show == "norm-weighted":
        shown = with_maps(trace, "inter-norm", inter_attention=row_shares(mix.inter_norm_head))
        plot(figure(inter_heatmap, shown, layer, head, colorscale=colorscale, what="norm-weighted share"),
             key="inter_norm")
    else:
        m = mix.inter_alti_layer[layer] if level == "this layer" else mix.inter_alti
        shown = with_maps(trace, f"inter-alti {layer}", inter_attention=np.asarray(m, dtype=np.float16)[None, None])
        title = f"ALTI, layer {layer + 1}" if level == "this layer" else f"ALTI composed over {L2} layers"
        plot(figure(inter_heatmap, shown, 0, 0, colorscale=colorscale, what="contribution", title=title),
             key="inter_alti_map")
    st.caption("Row = the sentence receiving, column = the sentence contributing; each row sums to 1. The input of "
               "this encoder is each sentence's vector plus its position row, one unit: ALTI cannot split content "
               "from position (the Why page does that).")
