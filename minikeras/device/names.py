"""Parsing device names in every spelling TensorFlow users write them."""
import re

_DEVICE_PATTERN = re.compile(
    r"^(?:/job:[^/]+)?(?:/replica:\d+)?(?:/task:\d+)?"
    r"/?(?:device:)?(?P<kind>cpu|gpu)(?::(?P<index>\d+))?$",
    re.IGNORECASE,
)


def parse_device_name(name):
    """Split a device name into ``(kind, index)``.

    Accepts ``"cpu"``, ``"cpu:0"``, ``"gpu:1"``, ``"GPU:1"``, ``"/gpu:1"``,
    ``"/device:GPU:1"`` and ``"/job:localhost/replica:0/task:0/device:GPU:1"``.
    A name without an index means index 0.

    Returns:
        ``("cpu" | "gpu", int)``.

    Raises:
        TypeError: ``name`` is not a string.
        ValueError: ``name`` is not a device name.
    """
    if not isinstance(name, str):
        raise TypeError(f"A device name must be a string like 'gpu:0', received {name!r} ({type(name).__name__}).")
    match = _DEVICE_PATTERN.match(name.strip())
    if match is None:
        raise ValueError(
            f"Malformed device name {name!r}: expected 'cpu', 'cpu:N', 'gpu:N', '/device:GPU:N' "
            "or '/job:localhost/replica:0/task:0/device:GPU:N'."
        )
    index = match.group("index")
    return match.group("kind").lower(), int(index) if index is not None else 0


def canonical_name(kind, index):
    """``("gpu", 1) -> "/device:GPU:1"``."""
    return f"/device:{kind.upper()}:{index}"
