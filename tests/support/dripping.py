"""A webhook receiver on 127.0.0.1 that answers a byte at a time, every ``interval`` seconds
(the campaign's receiver that held a check worker, issue 44), until :meth:`Dripper.release`
lets it send the rest at once. It records every request's body and how each connection ended."""

from __future__ import annotations

import json
import socketserver
import threading
import time
from typing import Any

ANSWER = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class Dripper:
    def __init__(self, interval: float = 1.0, status: int = 204) -> None:
        self.interval = interval
        self.answer = ANSWER.replace(b"204 No Content", f"{status} Status".encode())
        self.released = threading.Event()
        self.lock = threading.Lock()
        self.bodies: list[dict[str, Any]] = []
        #: per connection: "answered" (every byte sent), "cut" (the client closed it first), or "open"
        self.endings: list[str] = []
        self.sent: list[int] = []
        dripper = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                dripper._handle(self.request)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def _handle(self, sock: Any) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
        while len(body) < length:
            body += sock.recv(4096)
        with self.lock:
            self.bodies.append(json.loads(body))
            number = len(self.endings)
            self.endings.append("open")
            self.sent.append(0)
        try:
            for i in range(len(self.answer)):
                if self.released.is_set():
                    sock.sendall(self.answer[i:])
                    break
                sock.sendall(self.answer[i : i + 1])
                self.sent[number] += 1
                deadline = time.monotonic() + self.interval
                while time.monotonic() < deadline and not self.released.is_set():
                    time.sleep(0.05)
                    if _closed(sock):
                        raise ConnectionResetError("closed by the client")
            self.endings[number] = "answered"
        except OSError:
            self.endings[number] = "cut"

    def release(self) -> None:
        self.released.set()

    def close(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()


def _closed(sock: Any) -> bool:
    """Whether the peer closed ``sock`` (a non-blocking peek reads the end of the stream)."""
    import socket

    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
