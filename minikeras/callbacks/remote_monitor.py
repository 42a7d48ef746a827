"""RemoteMonitor: post each epoch's logs to a server, as JSON."""
import json
import urllib.error
import urllib.parse
import urllib.request
import warnings

import numpy

from minikeras.callbacks.callback import Callback


class RemoteMonitor(Callback):
    """POST ``{"epoch": n, **logs}`` to ``root + path`` at the end of every epoch.

    Uses the standard library (``urllib``), not ``requests``. With
    ``send_as_json=True`` the body is the JSON object
    (``Content-Type: application/json``); otherwise it is the form field
    ``field`` holding the JSON text, as Keras sends it. A server that cannot
    be reached gives a warning, never an exception: training goes on.

    Args:
        root: the server's root URL (default ``"http://localhost:9000"``).
        path: the path appended to ``root`` (default ``"/publish/epoch/end/"``).
        field: the form field of the JSON text (default ``"data"``).
        headers: optional extra HTTP headers (a dict).
        send_as_json: send the logs as a JSON body instead of a form.
        timeout: seconds to wait for the server (not in Keras; default 10).

    Raises:
        ValueError: a URL whose scheme is not http or https.
    """

    def __init__(self, root="http://localhost:9000", path="/publish/epoch/end/", field="data", headers=None,
                 send_as_json=False, timeout=10.0):
        super().__init__()
        scheme = urllib.parse.urlparse(root).scheme
        if scheme not in ("http", "https"):
            raise ValueError(f"RemoteMonitor: root must be an http or https URL, received {root!r}.")
        self.root, self.path, self.field, self.headers = root, path, field, headers
        self.send_as_json, self.timeout = send_as_json, timeout

    def on_epoch_end(self, epoch, logs=None):
        payload = {"epoch": epoch}
        for key, value in (logs or {}).items():
            payload[key] = value.item() if isinstance(value, (numpy.ndarray, numpy.generic)) else value
        headers = dict(self.headers or {})
        if self.send_as_json:
            body = json.dumps(payload).encode("utf-8")
            headers.setdefault("Content-Type", "application/json")
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(payload)}).encode("utf-8")
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        request = urllib.request.Request(self.root + self.path, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                response.read()
        except (urllib.error.URLError, OSError):
            warnings.warn(f"Could not reach RemoteMonitor root server at {self.root}", stacklevel=2)
