"""varimp core: exact and sampled random-forest variable importances (no Dash)."""

__version__ = "0.1.0"
