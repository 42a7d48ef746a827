"""reshaping layers (being written)."""

__all__ = []
