"""Pure figure functions: a model.trace.Trace in, a plotly go.Figure (or plain data) out.
No Streamlit here, so everything is testable without a running app."""
