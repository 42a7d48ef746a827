"""RemoteMonitor (minikeras/callbacks/remote_monitor.py) against a local
HTTP server on 127.0.0.1 (nothing leaves the machine)."""
import http.server
import json
import threading
import urllib.parse

import pytest

from minikeras.callbacks import RemoteMonitor


@pytest.fixture
def server():
    """A server on a free local port recording (path, headers, body) of each POST."""
    received = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server hook name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, dict(self.headers), body))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", received
    httpd.shutdown()
    httpd.server_close()


def test_posts_each_epoch_as_a_form_field(server, data, make_model):
    root, received = server
    x, y = data
    model = make_model()
    model.fit(x, y, epochs=2, batch_size=32, verbose=0, callbacks=[RemoteMonitor(root=root)])
    assert [path for path, _, _ in received] == ["/publish/epoch/end/"] * 2
    for epoch, (_, headers, body) in enumerate(received):
        assert headers["Content-Type"] == "application/x-www-form-urlencoded"
        payload = json.loads(urllib.parse.parse_qs(body.decode())["data"][0])
        assert payload["epoch"] == epoch and set(payload) == {"epoch", "loss", "mae"}
        assert isinstance(payload["loss"], float)


def test_posts_json_with_headers(server, data, make_model):
    root, received = server
    x, y = data
    monitor = RemoteMonitor(root=root, path="/logs", headers={"X-Run": "7"}, send_as_json=True)
    make_model().fit(x, y, epochs=1, verbose=0, callbacks=[monitor])
    (path, headers, body), = received
    assert path == "/logs" and headers["X-Run"] == "7" and headers["Content-Type"] == "application/json"
    assert json.loads(body)["epoch"] == 0


def test_unreachable_server_warns_and_training_goes_on(data, make_model):
    x, y = data
    closed = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    root = f"http://127.0.0.1:{closed.server_address[1]}"
    closed.server_close()  # nothing listens there now
    with pytest.warns(UserWarning, match="Could not reach RemoteMonitor"):
        history = make_model().fit(x, y, epochs=2, verbose=0, callbacks=[RemoteMonitor(root=root, timeout=2)])
    assert len(history.history["loss"]) == 2


def test_refuses_non_http_urls():
    with pytest.raises(ValueError, match="http"):
        RemoteMonitor(root="file:///etc")
