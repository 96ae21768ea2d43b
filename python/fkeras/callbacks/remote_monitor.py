"""RemoteMonitor (Keras 3): POSTs each epoch's logs to a server (standard-library urllib)."""

import json
import warnings

import numpy as np

from fkeras.callbacks.callback import Callback


class RemoteMonitor(Callback):
    """Sends `{"epoch": epoch, **logs}` to `root + path` at the end of each epoch.

    Args:
        root: the server's root URL ("http://localhost:9000").
        path: the path the events go to ("/publish/epoch/end/").
        field: the form field holding the JSON text when not `send_as_json` ("data").
        headers: optional dict of HTTP headers.
        send_as_json: send the body as `application/json` instead of a form.
    """

    def __init__(self, root="http://localhost:9000", path="/publish/epoch/end/",
                 field="data", headers=None, send_as_json=False):
        super().__init__()
        self.root = root
        self.path = path
        self.field = field
        self.headers = headers
        self.send_as_json = send_as_json

    def on_epoch_end(self, epoch, logs=None):
        import urllib.error  # lazily: urllib.request imports http.client and email
        import urllib.parse
        import urllib.request

        send = {"epoch": epoch}
        for k, v in (logs or {}).items():
            send[k] = v.item() if isinstance(v, (np.ndarray, np.generic)) else (
                float(v) if hasattr(v, "__float__") and not isinstance(v, (int, float)) else v)
        headers = dict(self.headers or {})
        if self.send_as_json:
            body = json.dumps(send).encode()
            headers.setdefault("Content-Type", "application/json")
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(send)}).encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        request = urllib.request.Request(self.root + self.path, data=body, headers=headers,
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                response.read()
        except (urllib.error.URLError, OSError):
            warnings.warn(f"Could not reach RemoteMonitor root server at {self.root}",
                          stacklevel=2)
