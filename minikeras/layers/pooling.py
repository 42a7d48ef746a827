"""pooling layers (being written)."""

__all__ = []
