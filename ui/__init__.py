"""What the Streamlit pages share: the model and result caches, session state, shared links, the
document store, exports. Kept out of ``pages/`` so Streamlit never lists these modules as pages."""
