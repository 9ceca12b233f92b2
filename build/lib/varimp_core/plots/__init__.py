"""Plotly figure builders: pure functions ``result -> go.Figure`` that also work in a notebook."""
