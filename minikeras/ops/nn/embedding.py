"""embedding ops (being written)."""

__all__ = []
