"""Shared pieces for the dashboard pages: cache, jobs, URL state and controls.

The leading underscore keeps Dash from loading this folder as pages; the
modules import without a Dash app so tests can call their functions directly.
"""
