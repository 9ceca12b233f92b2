"""Dashboard pages, one thin module per page (loaded by ``Dash(use_pages=True)``)."""
