"""core layers (being written)."""

__all__ = []
