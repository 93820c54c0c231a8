"""A threading HTTP server that serves at most ``MAX_CONNECTIONS`` connections at once.

One thread per connection, as ``ThreadingHTTPServer``; a connection beyond the cap
is answered 503 at once and closed, without a thread, so a caller that opens
connections and sends nothing cannot pile up threads. (Each handler's own
``timeout`` closes a connection that stays silent.)
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_CONNECTIONS = 32


class BoundedHTTPServer(ThreadingHTTPServer):
    """A thread per connection, at most ``MAX_CONNECTIONS`` of them: one more is answered 503 and closed."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            try:
                request.settimeout(1.0)
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            except OSError:
                pass
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        return   # a client that went away mid-request is not the server's problem (no traceback on stderr)
