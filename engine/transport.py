"""The real network under the guarded fetch: a resolver and an httpx transport.

The transport connects to the address the guard checked — never resolving
again — by putting that address in the URL while sending the host name as
the Host header and as the TLS server name (httpcore's ``sni_hostname``), so
certificates are verified against the name. Proxies from the environment
are ignored, redirects are left to the guard, and the body is read only up
to the size cap.
"""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import urlsplit, urlunsplit

from .netguard import FetchFailed, FetchResponse

__all__ = ["HttpxTransport", "system_resolver"]


async def system_resolver(host: str) -> list[str]:
    """Every address the system resolver gives for ``host`` (empty when none)."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, None,
                                                             type=socket.SOCK_STREAM)
    except socket.gaierror:
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class HttpxTransport:
    """One request through httpx to an already checked address.

    Args:
        verify: TLS verification (an ``ssl.SSLContext`` in tests with a local CA).
    """

    def __init__(self, *, verify: object = True) -> None:
        self.verify = verify

    async def __call__(self, method: str, url: str, headers: dict[str, str], body: str | None,
                       address: str, *, timeout: float, max_bytes: int) -> FetchResponse:
        # Imported here, not at the top: httpx's __init__ imports its command
        # line, and with it rich, whenever rich is installed (textual brings
        # it), and the engine must stay headless until it really fetches.
        import httpx

        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        literal = f"[{address}]" if ":" in address else address
        target = urlunsplit((parts.scheme, f"{literal}:{port}", parts.path or "/", parts.query, ""))
        default_port = port == (443 if parts.scheme == "https" else 80)
        send_headers = {k: v for k, v in headers.items() if k.lower() != "host"}
        send_headers["Host"] = host if default_port else f"{host}:{port}"
        try:
            async with httpx.AsyncClient(trust_env=False, follow_redirects=False,
                                         timeout=timeout, verify=self.verify) as client:  # type: ignore[arg-type]
                request = client.build_request(method, target, headers=send_headers,
                                               content=body,
                                               extensions={"sni_hostname": host})
                response = await client.send(request, stream=True)
                try:
                    chunks, size = [], 0
                    async for chunk in response.aiter_bytes():
                        size += len(chunk)
                        if size > max_bytes:
                            raise FetchFailed("too-large",
                                              f"the response is larger than {max_bytes} bytes",
                                              code="SCOPE_REFUSED")
                        chunks.append(chunk)
                finally:
                    await response.aclose()
        except httpx.TimeoutException as exc:
            raise FetchFailed("timeout", f"no answer from {host} within {timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise FetchFailed("connect", f"{host}: {exc}") from exc
        text = b"".join(chunks).decode(response.encoding or "utf-8", errors="replace")
        location = response.headers.get("location")
        return FetchResponse(response.status_code, text,
                             {"location": location} if location else None)
