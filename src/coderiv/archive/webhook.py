"""The archive's webhook: which URL may be told that a check ended, and one POST to it within a
deadline for the whole request.

The URL is the operator's setting, checked when the server starts (:func:`webhook_target`, one
line and a non-zero exit): only ``http`` and ``https`` (``file://`` and the other schemes
urllib would open are refused), a host that resolves, and none of its addresses loopback,
link-local, private, reserved, multicast or unspecified unless the operator allows them
(``--webhook-allow-private``: a receiver on the same machine or network), since a webhook
that reaches such addresses lets whoever chooses its URL probe the server's own network.

A delivery (:func:`post`) resolves the host again and connects to an address that passed the
same rule (a name whose address changed since the start is refused, not followed), and ends
within ``deadline`` seconds whatever the receiver does: the socket timeout of http.client
bounds each read, not the request, so a receiver sending a byte every few seconds could hold
it for ever; a timer shuts the socket down at the deadline, which ends any read in progress.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import socket
import ssl
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

from coderiv.errors import CoderivError

#: Seconds one delivery may take, from connecting to the receiver's status line.
DEADLINE = 10.0
SCHEMES = ("http", "https")


@dataclass(frozen=True)
class WebhookTarget:
    """A checked webhook URL: its scheme, host, port and path (with query), and whether private
    addresses are allowed."""

    url: str
    scheme: str
    host: str
    port: int
    path: str
    allow_private: bool = False


def refused_kind(address: str) -> str | None:
    """What makes ``address`` one a webhook may not reach by default (None: a public address)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for kind, flag in (("loopback", ip.is_loopback), ("link-local", ip.is_link_local), ("unspecified", ip.is_unspecified),
                       ("multicast", ip.is_multicast), ("private", ip.is_private), ("reserved", ip.is_reserved)):
        if flag:
            return kind
    return None


def webhook_target(url: str, allow_private: bool = False) -> WebhookTarget:
    """``url`` checked (module docstring); a URL that may not be used is a one-line error."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise CoderivError(f"--webhook {url!r} is not a URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise CoderivError(f"--webhook {url!r} must be an http:// or https:// URL (got {scheme + ':' if scheme else 'no scheme'})")
    if not parts.hostname:
        raise CoderivError(f"--webhook {url!r} names no host")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    target = WebhookTarget(url, scheme, parts.hostname, port or (443 if scheme == "https" else 80), path, allow_private)
    resolve(target, "--webhook")
    return target


def resolve(target: WebhookTarget, what: str = "the webhook") -> str:
    """An address of ``target``'s host that it may reach (module docstring), or a one-line error."""
    try:
        found = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise CoderivError(f"{what} {target.url!r}: cannot resolve {target.host} ({exc})") from None
    addresses = [str(info[4][0]) for info in found]
    if not target.allow_private:
        for address in addresses:
            kind = refused_kind(address)
            if kind is not None:
                raise CoderivError(
                    f"{what} {target.url!r} reaches a {kind} address ({address}); "
                    "pass --webhook-allow-private to allow a receiver on this machine or network")
    if not addresses:
        raise CoderivError(f"{what} {target.url!r}: {target.host} has no address")
    return addresses[0]


#: The header that carries a delivery's signature: ``t=UNIX_SECONDS,sha256=HEX``.
SIGNATURE_HEADER = "X-Coderiv-Signature"


def signature(secret: str, body: bytes, moment: int) -> str:
    """The signature header's value for ``body`` sent at ``moment`` (Unix seconds): HMAC-SHA256
    (RFC 2104) with the archive's secret over ``"{moment}." + body``, so that a receiver knows
    the body came from this archive unchanged, and when (it refuses an old one: no replay).
    A receiver checks it as ``hmac.compare_digest(expected, given)`` with the same secret."""
    digest = hmac.new(secret.encode("utf-8"), f"{moment}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={moment},sha256={digest}"


def post(target: WebhookTarget, body: bytes, headers: dict[str, str], deadline: float = DEADLINE) -> int:
    """POST ``body`` to ``target``; the receiver's status (any, the caller judges it). Raises
    :class:`CoderivError` (one line) when the address is refused, the receiver cannot be reached,
    or no status line came within ``deadline`` seconds of the start."""
    address = resolve(target)
    kind = http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
    connection = kind(target.host, target.port, timeout=deadline)
    cut = threading.Event()

    def connect(_: object, timeout: float, source: tuple[str, int] | None) -> socket.socket:
        """The address just checked, not a second resolution of the name (TLS still checks the
        host name); none once the deadline has passed."""
        sock = socket.create_connection((address, target.port), timeout, source)
        if cut.is_set():
            sock.close()
            raise TimeoutError("connected after the deadline")
        return sock

    connection._create_connection = connect  # type: ignore[attr-defined]

    def shut() -> None:
        cut.set()
        sock = connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(deadline, shut)
    timer.daemon = True
    timer.start()
    try:
        connection.request("POST", target.path, body, {**headers, "Content-Length": str(len(body))})
        return connection.getresponse().status
    except (OSError, http.client.HTTPException, ssl.SSLError) as exc:
        if cut.is_set():
            raise CoderivError(f"no answer from {target.host} within {deadline:g} s") from None
        raise CoderivError(f"{target.host}: {type(exc).__name__}: {exc}") from None
    finally:
        timer.cancel()
        connection.close()
