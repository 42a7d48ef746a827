"""embedding layers (being written)."""

__all__ = []
