"""unary ops (being written)."""

__all__ = []
