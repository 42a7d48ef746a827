"""regularization layers (being written)."""

__all__ = []
