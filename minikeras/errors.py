"""The library's own exceptions."""


class ResourceExhaustedError(RuntimeError):
    """Raised when an allocation would go past a device's memory limit.

    Like TensorFlow's error of the same name. The allocation that failed is
    not made; the process can go on, e.g. with a smaller batch.

    Attributes:
        device: canonical name of the logical device, e.g. ``/device:GPU:0``.
        requested: bytes asked for.
        in_use: bytes held on the device when the request was made.
        limit: the device's limit in bytes (None when the device itself ran out).
    """

    def __init__(self, device, requested, in_use, limit, detail=""):
        self.device = device
        self.requested = int(requested)
        self.in_use = int(in_use)
        self.limit = None if limit is None else int(limit)
        limit_text = "the device's capacity" if limit is None else f"limit {self.limit} bytes"
        message = (
            f"Out of memory on {device}: asked for {self.requested} bytes with "
            f"{self.in_use} bytes in use, {limit_text}."
        )
        if detail:
            message += " " + detail
        super().__init__(message)
